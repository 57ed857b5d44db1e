package nodeoverlay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/settings"
)

func TestGateErrorsRefuseOverlaysWhileTheGateIsOff(t *testing.T) {
	objs := apis.Objects{NodeOverlays: []*apis.NodeOverlay{{ObjectMeta: metav1.ObjectMeta{Name: "sp"},
		Origin: apis.Origin{File: "o.yaml", Document: 1, Item: -1}}}}
	errs := GateErrors(objs, settings.DefaultFeatureGates())
	require.Len(t, errs, 1)
	assert.Equal(t, "kind", errs[0].Err.Field)
	assert.Contains(t, errs[0].Error(), "o.yaml: document 1: NodeOverlay/sp: kind: Forbidden: NodeOverlay is alpha in Karpenter and its feature gate NodeOverlay is off")

	on := settings.DefaultFeatureGates()
	on.NodeOverlay = true
	assert.Empty(t, GateErrors(objs, on))
	assert.Empty(t, GateErrors(apis.Objects{}, settings.DefaultFeatureGates()), "no overlay, nothing to refuse")
}
