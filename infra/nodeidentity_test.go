package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

func nodeClassItem(t *testing.T, name string, spec apis.EC2NodeClassSpec) state.ConfigItem {
	t.Helper()
	nc := apis.EC2NodeClass{Spec: spec}
	nc.Name = name
	b, err := json.Marshal(nc)
	require.NoError(t, err)
	return state.ConfigItem{Kind: state.KindEC2NodeClass, Name: name, Spec: string(b)}
}

func TestNodeIdentitiesFrom(t *testing.T) {
	profile := "CustomProfile"
	keyA, keyB := "alias/nodes", "1234abcd-12ab-34cd-56ef-1234567890ab"
	items := []state.ConfigItem{
		{Kind: state.KindNodePool, Name: "default", Spec: `{"not":"a node class"}`},
		nodeClassItem(t, "b", apis.EC2NodeClassSpec{Role: "NodeRole"}),
		nodeClassItem(t, "a", apis.EC2NodeClassSpec{Role: "NodeRole", AMISelectorTerms: []apis.AMISelectorTerm{
			{SSMParameter: "/custom/ami"}, {Alias: "al2023@latest"}}}),
		nodeClassItem(t, "c", apis.EC2NodeClassSpec{InstanceProfile: &profile}),
		nodeClassItem(t, "d", apis.EC2NodeClassSpec{Role: "OtherRole", BlockDeviceMappings: []*apis.BlockDeviceMapping{
			{EBS: &apis.BlockDevice{KMSKeyID: &keyB}}, {EBS: &apis.BlockDevice{KMSKeyID: &keyA}}, {EBS: &apis.BlockDevice{}}}}),
		nodeClassItem(t, "e", apis.EC2NodeClassSpec{Role: "OtherRole", BlockDeviceMappings: []*apis.BlockDeviceMapping{
			{EBS: &apis.BlockDevice{KMSKeyID: &keyA}}}}),
	}
	got, err := NodeIdentitiesFrom(items)
	require.NoError(t, err)
	assert.Equal(t, NodeIdentities{Roles: []string{"NodeRole", "OtherRole"}, InstanceProfiles: []string{"CustomProfile"},
		SSMParameters: []string{"/custom/ami"}, VolumeKeys: []string{keyB, "alias/nodes"}}, got)

	_, err = NodeIdentitiesFrom([]state.ConfigItem{nodeClassItem(t, "empty", apis.EC2NodeClassSpec{})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EC2NodeClass/empty: spec.role or spec.instanceProfile is required")

	_, err = NodeIdentitiesFrom([]state.ConfigItem{{Kind: state.KindEC2NodeClass, Name: "broken", Spec: "{"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EC2NodeClass/broken: decoding spec")
}
