package launchtemplate

import (
	"testing"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// launchedTags is what a template's data tags each resource type with.
func launchedTags(t *testing.T, tmpl Template) map[ec2types.ResourceType]map[string]string {
	t.Helper()
	data, err := Data(tmpl)
	require.NoError(t, err)
	out := map[ec2types.ResourceType]map[string]string{}
	for _, s := range data.TagSpecifications {
		out[s.ResourceType] = tagMap(s.Tags)
	}
	return out
}

// What a template launches (instance, volumes, network interface) carries karpenter.sh/nodepool with
// the template's NodePool, for cost allocation reports; the template itself does not (a launch template
// costs nothing).
func TestTemplatesTagWhatTheyLaunchWithTheNodePool(t *testing.T) {
	tmpl := testTemplate(func(s *apis.EC2NodeClassSpec) { s.Tags["karpenter.sh/nodepool"] = "spoofed" })
	byType := launchedTags(t, tmpl)
	require.Len(t, byType, 3)
	for _, rt := range []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface} {
		assert.Equal(t, "general", byType[rt][instance.KarpenterTagNodePool], "%s", rt)
	}
	assert.NotContains(t, Tags("prod", tmpl.NodeClass, "general"), instance.KarpenterTagNodePool, "the template's own tags")

	tmpl.Options.Labels = nil // a template without a NodePool label tags no NodePool
	for rt, tags := range launchedTags(t, tmpl) {
		assert.NotContains(t, tags, instance.KarpenterTagNodePool, "%s", rt)
	}
}

// However the node class is tagged, neither a template nor what it launches carries the tags Karpenter's
// garbage collection terminates an instance by, or deletes a launch template by.
func TestNoTemplateCarriesKarpentersGarbageCollectionTags(t *testing.T) {
	tmpl := testTemplate(func(s *apis.EC2NodeClassSpec) {
		for _, k := range instance.KarpenterOwnedTagKeys {
			s.Tags[k] = "prod"
		}
	})
	own := Tags("prod", tmpl.NodeClass, "general")
	assert.False(t, instance.KarpenterDeletesTemplate(own, "prod"), "template tags %v", own)
	assert.False(t, instance.KarpenterCollectsInstance(own, "prod"), "template tags %v", own)
	for rt, tags := range launchedTags(t, tmpl) {
		assert.False(t, instance.KarpenterCollectsInstance(tags, "prod"), "%s tags %v", rt, tags)
		assert.False(t, instance.KarpenterDeletesTemplate(tags, "prod"), "%s tags %v", rt, tags)
		assert.NotContains(t, tags, instance.KarpenterTagNodeClass, "%s", rt)
	}
}
