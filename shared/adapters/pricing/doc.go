// Package pricing knows what instance types cost per hour.
//
// On-demand prices come from the AWS Pricing API (GetProducts, Linux, shared tenancy) for the function's
// region. The lifecycle function reads it every OnDemandRefreshEvery (12 hours, Karpenter's cadence)
// through an OnDemandRefresher and stores the table in the state table when the answer is complete and
// sane; the provisioner and disruption functions load the stored table (StoredOnDemand, at most once a
// minute). Until a table is stored, or when the API fails, prices come from the shipped table
// (data/on-demand.json: every commercial region, both GovCloud regions and cn-north-1, each with its
// source and date; a region it does not cover starts from its own partition's fallback region, labelled
// "fallback"). OnDemandSourceInfo says which source prices decisions. Prices never cross a partition (see
// Partition): China is read from its own Pricing API endpoint and priced in CNY (Currency), GovCloud has
// no Pricing API and keeps the shipped table, and a region of a partition without shipped prices is
// refused.
// A provider isolated from the internet (EnvIsolatedVPC, NewProviderFromEnv) never calls the Pricing API
// and keeps the shipped table, and its OnDemandSourceInfo and DecisionNote say so.
//
// Spot prices per zone come from EC2's DescribeSpotPriceHistory: the lifecycle function reads EC2
// (RefreshSpot) and stores the table it read (SpotTable); the provisioner loads the stored table
// (LoadSpot), newest observation first. Until a spot price is known the spot offering is priced at
// on-demand, so it is never preferred on a guess, and a seen spot price is never taken below SpotFloor of
// on-demand, so odd data cannot make spot look free. A Provider is safe for concurrent use.
package pricing
