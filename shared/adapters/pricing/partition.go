package pricing

import (
	"errors"
	"strings"
)

// AWS partitions, by the prefix of their region codes. Prices never cross a partition: each has its own
// Pricing API (or none) and, in China, its own currency.
const (
	PartitionAWS      = "aws"
	PartitionChina    = "aws-cn"
	PartitionGovCloud = "aws-us-gov"
)

// Partition is the partition of region: aws-cn for cn-*, aws-us-gov for us-gov-*, aws for a commercial
// region code (two letters, a dash...), and "" for anything else (the isolated partitions us-iso-*,
// us-isob-*, eusc-* and others Nodewright has no prices for).
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return PartitionChina
	case strings.HasPrefix(region, "us-gov-"):
		return PartitionGovCloud
	case strings.HasPrefix(region, "us-iso"), strings.HasPrefix(region, "eusc-"):
		return ""
	case commercialRegion(region):
		return PartitionAWS
	}
	return ""
}

// commercialRegion matches a region code of the aws partition such as eu-west-1 or ap-southeast-7.
func commercialRegion(region string) bool {
	parts := strings.Split(region, "-")
	if len(parts) != 3 || len(parts[0]) != 2 || parts[1] == "" || parts[2] == "" {
		return false
	}
	for _, c := range parts[2] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Currency is the currency of region's list prices, as the Pricing API's pricePerUnit names it: CNY in
// China, USD everywhere else.
func Currency(region string) string {
	if Partition(region) == PartitionChina {
		return "CNY"
	}
	return "USD"
}

// HasPricingAPI reports whether region's partition has a Pricing API to read. GovCloud has none (as
// Karpenter, Nodewright never reads one there and prices from the shipped table); neither do the
// isolated partitions.
func HasPricingAPI(region string) bool {
	p := Partition(region)
	return p == PartitionAWS || p == PartitionChina
}

// partitionFallback is the region whose shipped prices stand in, until the Pricing API answers, for a
// region of the same partition the table does not cover: us-east-1 in aws (as Karpenter), cn-north-1 in
// China (Karpenter would take us-east-1's USD prices; a CNY table is the only one in the right currency),
// us-gov-west-1 in GovCloud.
var partitionFallback = map[string]string{
	PartitionAWS:      FallbackRegion,
	PartitionChina:    "cn-north-1",
	PartitionGovCloud: "us-gov-west-1",
}

// ErrNoPartitionPrices is returned for a region whose partition has no shipped prices: prices are never
// borrowed from another partition.
var ErrNoPartitionPrices = errors.New("no shipped on-demand prices for the region's partition, and prices are never taken from another partition")
