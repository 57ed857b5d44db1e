// Package pricing knows what instance types cost per hour: on-demand prices from a table shipped with the
// code (data/on-demand.json: us-east-1, us-east-2, us-west-2 and eu-west-1, each with its source and date)
// and refreshed from the AWS Pricing API when it is reachable, and spot prices per zone from EC2's
// DescribeSpotPriceHistory. Until a spot price is known the spot offering is priced at on-demand, so it is
// never preferred on a guess.
//
// Prices are refreshed on a schedule, never per launch: the lifecycle function reads EC2 (RefreshSpot) and
// stores the table it read (SpotTable) in the state table; the provisioner loads the stored table
// (LoadSpot), newest observation first. A seen spot price is never taken below SpotFloor of on-demand, so
// odd data cannot make spot look free. A Provider is safe for concurrent use.
package pricing
