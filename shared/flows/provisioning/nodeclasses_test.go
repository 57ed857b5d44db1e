package provisioning

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// fakeResolver answers with a fixed resolution per class name.
type fakeResolver struct {
	res   map[string]nodeclass.Resolution
	err   error
	calls int
}

func (f *fakeResolver) Resolve(_ context.Context, nc *apis.EC2NodeClass, _ string) (nodeclass.Resolution, error) {
	f.calls++
	return f.res[nc.Name], f.err
}

func pool(name, class string) scheduling.NodePool {
	return scheduling.NodePool{Name: name, Labels: map[string]string{scheduling.LabelEC2NodeClass: class}}
}

func TestPrepareClasses(t *testing.T) {
	ready := nodeclass.Resolution{Ready: true, Subnets: []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}}}
	notReady := nodeclass.Resolution{Status: apis.EC2NodeClassStatus{Conditions: []metav1.Condition{
		{Type: nodeclass.ConditionTypeReady, Status: metav1.ConditionFalse, Message: "not ready: [AMIsReady]"}}}}
	class := func(name string) *apis.EC2NodeClass {
		nc := &apis.EC2NodeClass{}
		nc.Name = name
		return nc
	}
	cfg := runConfig{
		pools:       []scheduling.NodePool{pool("a", "good"), pool("b", "good"), pool("c", "broken"), pool("d", "missing")},
		nodeClasses: map[string]*apis.EC2NodeClass{"good": class("good"), "broken": class("broken")},
	}
	r := &fakeResolver{res: map[string]nodeclass.Resolution{"good": ready, "broken": notReady}}
	classes, pools, problems, failed, _ := prepareClasses(context.Background(), r, &instancetypes.Catalog{}, nil, cfg, "1.34", nil, subnetView{})
	assert.Equal(t, 2, r.calls, "each class is resolved once")
	require.Contains(t, classes, "good")
	assert.Equal(t, "subnet-a", classes["good"].subnets["us-east-1a"].ID)
	require.Len(t, pools, 2)
	assert.Equal(t, "a", pools[0].Name)
	assert.Equal(t, "b", pools[1].Name)
	assert.Equal(t, []string{
		"EC2NodeClass broken is not ready: not ready: [AMIsReady]",
		"NodePool c cannot launch: EC2NodeClass broken is not ready: not ready: [AMIsReady]",
		`EC2NodeClass "missing" is not configured`,
		`NodePool d cannot launch: EC2NodeClass "missing" is not configured`,
	}, problems)
	assert.Equal(t, map[string]string{"broken": "EC2NodeClass broken is not ready: not ready: [AMIsReady]",
		"missing": `EC2NodeClass "missing" is not configured`}, failed, "why each class is unusable, for drift")

	r = &fakeResolver{err: errors.New("DescribeSubnets: throttled")}
	_, pools, problems, failed, _ = prepareClasses(context.Background(), r, &instancetypes.Catalog{}, nil, runConfig{
		pools: []scheduling.NodePool{pool("a", "good")}, nodeClasses: cfg.nodeClasses}, "1.34", nil, subnetView{})
	assert.Empty(t, pools)
	assert.Contains(t, problems[0], "DescribeSubnets: throttled")
	assert.Contains(t, failed["good"], "DescribeSubnets: throttled")
}
