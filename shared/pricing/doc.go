// Package pricing knows what instance types cost per hour: on-demand prices from a table shipped with the
// code (data/on-demand.json: us-east-1, us-east-2, us-west-2 and eu-west-1, each with its source and date)
// and refreshed from the AWS Pricing API when it is reachable, and spot prices per zone from EC2's
// DescribeSpotPriceHistory. Until a spot price is known the spot offering is priced at on-demand, so it is
// never preferred on a guess.
//
// Prices are refreshed on a schedule (the lifecycle function), never per launch; a Provider is safe for
// concurrent use.
package pricing
