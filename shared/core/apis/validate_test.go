package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestDefaultAndValidate(t *testing.T) {
	objs, err := apis.Decode("pools.yaml", []byte(nodePoolDoc("a")+"---\n"+nodePoolDoc("a")+"---\n"+baseEC2NodeClassYAML+"---\n"+baseEC2NodeClassYAML))
	require.NoError(t, err)
	errs := apis.DefaultAndValidate(objs)
	require.Len(t, errs, 2)
	assert.Equal(t, apis.ObjectError{
		Origin: apis.Origin{File: "pools.yaml", Document: 2, Item: -1}, Kind: "NodePool", Name: "a",
		Err: field.Duplicate(field.NewPath("metadata", "name"), "a"),
	}, errs[0])
	assert.Equal(t, `pools.yaml: document 2: NodePool/a: metadata.name: Duplicate value: "a"`, errs[0].Error())
	assert.Equal(t, `pools.yaml: document 4: EC2NodeClass/base: metadata.name: Duplicate value: "base"`, errs[1].Error())
	assert.Equal(t, apis.NillableDuration("720h"), objs.NodePools[0].Spec.Template.Spec.ExpireAfter, "objects are defaulted in place")
	assert.NotNil(t, objs.EC2NodeClasses[0].Spec.MetadataOptions)
}

func TestDefaultAndValidateReportsEachObject(t *testing.T) {
	objs, err := apis.Decode("x.yaml", []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: bad}
spec:
  template:
    spec:
      requirements: [{key: a, operator: Gt, values: ["x"]}]
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}
`))
	require.NoError(t, err)
	errs := apis.DefaultAndValidate(objs)
	require.Len(t, errs, 1)
	assert.Equal(t, `x.yaml: document 1: NodePool/bad: spec.template.spec.requirements[0].values[0]: Invalid value: "x": requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value`, errs[0].Error())
}

func TestMissingNodeClasses(t *testing.T) {
	objs, err := apis.Decode("x.yaml", []byte(nodePoolDoc("a")))
	require.NoError(t, err)
	assert.Equal(t, []string{`x.yaml: document 1: NodePool/a: spec.template.spec.nodeClassRef.name: EC2NodeClass "default" is not in the given manifests`}, apis.MissingNodeClasses(objs))
	nc := baseEC2NodeClass(t)
	nc.Name = "default"
	objs.EC2NodeClasses = append(objs.EC2NodeClasses, nc)
	assert.Empty(t, apis.MissingNodeClasses(objs))
}
