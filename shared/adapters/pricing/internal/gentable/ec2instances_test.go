package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleInstances has the shape of ec2instances.info's instances.json, trimmed to the fields read.
const sampleInstances = `[
 {"instance_type": "m5.large", "generation": "current", "pricing": {
   "us-east-2": {"linux": {"ondemand": "0.096"}, "dedicated": {"ondemand": "5.069"}},
   "eu-west-1": {"linux": {"ondemand": "0.107"}}}},
 {"instance_type": "m7g.large", "generation": "current", "pricing": {
   "us-east-2": {"linux": {"ondemand": "0.0816"}}}},
 {"instance_type": "m3.large", "generation": "previous", "pricing": {
   "us-east-2": {"linux": {"ondemand": "0.133"}}}},
 {"instance_type": "mac2.metal", "generation": "current", "pricing": {
   "us-east-2": {"linux": {"ondemand": "0.65"}}}},
 {"instance_type": "x9.large", "generation": "current", "pricing": {
   "us-east-2": {"linux": {"ondemand": "N/A"}}, "eu-west-1": {"linux": {"ondemand": "0"}}}},
 {"instance_type": "z9.large", "generation": "current", "pricing": {
   "us-east-2": {"dedicated": {"ondemand": "1.5"}}}}
]`

func TestOnDemandFromEC2InstancesKeepsCurrentLinuxPrices(t *testing.T) {
	prices, skipped, err := onDemandFromEC2Instances(strings.NewReader(sampleInstances), []string{"us-east-2", "eu-west-1"})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"m5.large": 0.096, "m7g.large": 0.0816}, prices["us-east-2"])
	assert.Equal(t, map[string]float64{"m5.large": 0.107}, prices["eu-west-1"])
	assert.Equal(t, skipCounts{NotOffered: 1, PreviousGeneration: 1, Mac: 1, Unpriced: 1}, skipped["us-east-2"])
	assert.Equal(t, skipCounts{NotOffered: 4, Unpriced: 1}, skipped["eu-west-1"])
}

func TestOnDemandFromEC2InstancesRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		json, region, want string
	}{
		"not an array":    {`{"instance_type": "m5.large"}`, "us-east-2", "want a JSON array"},
		"unnamed record":  {`[{"generation": "current"}]`, "us-east-2", "record 0: instance_type is empty"},
		"unknown region":  {sampleInstances, "us-east-9", "region us-east-9: no current-generation"},
		"truncated input": {`[{"instance_type": "m5.large"`, "us-east-2", "decoding instances.json"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := onDemandFromEC2Instances(strings.NewReader(tc.json), []string{tc.region})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
