package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overlayPools is an on-demand pool of c5 and m5 instances, with its class.
const overlayPools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c5, m5]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

// savingsPlan is a Savings-Plan-style overlay: 30% off every m5 offering.
const savingsPlan = `---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: savings-plan}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "-30%"
  weight: 10
`

// overlayPod asks for 3 CPUs: a c5.xlarge ($0.17) or m5.xlarge ($0.192 in the sample catalog) holds it.
const overlayPod = `apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  %s
  containers: [{name: app, image: app, resources: {requests: {cpu: "3", memory: 2Gi}}}]
`

// overlayNode is a c5.xlarge of the pool, in us-east-1a, that the pod runs on.
const overlayNode = `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
    karpenter.sh/nodepool: default
    karpenter.sh/initialized: "true"
    karpenter.sh/registered: "true"
    karpenter.sh/capacity-type: on-demand
    karpenter.k8s.aws/ec2nodeclass: default
    karpenter.k8s.aws/instance-family: c5
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    kubernetes.io/hostname: n1
    node.kubernetes.io/instance-type: c5.xlarge
    topology.kubernetes.io/zone: us-east-1a
spec: {providerID: "aws:///us-east-1a/i-n1"}
status:
  capacity: {cpu: "4", memory: 7577Mi, pods: "58"}
  allocatable: {cpu: 3920m, memory: 6584Mi, pods: "58"}
  conditions: [{type: Ready, status: "True"}]
`

func writeOverlayFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// The dry run on a cluster with a Savings Plan overlay picks the overlay-priced types (issue 29): without
// the overlay the pod gets the cheaper c5.xlarge; with 30% off m5, the m5.xlarge at $0.1344 is cheaper and
// is planned, priced at the overlay's price.
func TestPlanPicksSavingsPlanOverlayPricedTypes(t *testing.T) {
	dir := t.TempDir()
	pods := writeOverlayFile(t, dir, "pods.yaml", strings.ReplaceAll(overlayPod, "%s", "schedulerName: default-scheduler"))
	without := writeOverlayFile(t, dir, "without.yaml", overlayPools)
	with := writeOverlayFile(t, dir, "with.yaml", overlayPools+savingsPlan)

	doc := planJSONOf(t, "--pods", pods, "--nodepools", without, "--instance-types", sampleCatalog, "--feature-gates", "NodeOverlay=true")
	require.Len(t, doc.NodeClaims, 1)
	assert.Equal(t, "c5.xlarge", doc.NodeClaims[0].InstanceType)
	assert.InDelta(t, 0.17, doc.NodeClaims[0].PricePerHour, 1e-9)

	doc = planJSONOf(t, "--pods", pods, "--nodepools", with, "--instance-types", sampleCatalog, "--feature-gates", "NodeOverlay=true")
	require.Len(t, doc.NodeClaims, 1)
	assert.Equal(t, "m5.xlarge", doc.NodeClaims[0].InstanceType)
	assert.InDelta(t, 0.192*0.7, doc.NodeClaims[0].PricePerHour, 1e-9)
	assert.Equal(t, "m5.xlarge", doc.NodeClaims[0].InstanceTypeOptions[0], "cheapest first at the overlay's prices")
}

// plan --disrupt with the same overlay replaces a c5.xlarge by the overlay-priced m5.xlarge; without it
// the c5.xlarge is already the cheapest and is kept.
func TestPlanDisruptReplacesWithSavingsPlanOverlayPricedType(t *testing.T) {
	dir := t.TempDir()
	pods := writeOverlayFile(t, dir, "pods.yaml", strings.ReplaceAll(overlayPod, "%s", "nodeName: n1"))
	nodes := writeOverlayFile(t, dir, "nodes.yaml", overlayNode)
	run := func(pools string) contractDoc {
		t.Helper()
		code, out, errOut := runPlanArgs(t, "--disrupt", "--pods", pods, "--nodes", nodes, "--nodepools", pools,
			"--instance-types", sampleCatalog, "--feature-gates", "NodeOverlay=true", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var doc contractDoc
		require.NoError(t, json.Unmarshal([]byte(out), &doc))
		return doc
	}
	doc := run(writeOverlayFile(t, dir, "without.yaml", overlayPools))
	assert.Empty(t, doc.Commands, "c5.xlarge is the cheapest type that holds the pod")

	doc = run(writeOverlayFile(t, dir, "with.yaml", overlayPools+savingsPlan))
	require.Len(t, doc.Commands, 1)
	c := doc.Commands[0]
	assert.Equal(t, "replace", c.Action)
	require.Len(t, c.Replacements, 1)
	assert.Equal(t, "m5.xlarge", c.Replacements[0].InstanceType)
	assert.InDelta(t, 0.192*0.7, c.Replacements[0].PricePerHour, 1e-9)
	assert.InDelta(t, 0.17-0.192*0.7, c.SavingsPerHour, 1e-9)
}

// With the NodeOverlay gate off (the default), a NodeOverlay is refused with a message naming the object,
// the field and how to turn the gate on — by plan and by validate alike.
func TestNodeOverlayIsRefusedWhileTheGateIsOff(t *testing.T) {
	dir := t.TempDir()
	pods := writeOverlayFile(t, dir, "pods.yaml", strings.ReplaceAll(overlayPod, "%s", "schedulerName: default-scheduler"))
	with := writeOverlayFile(t, dir, "with.yaml", overlayPools+savingsPlan)
	code, _, errOut := runPlanArgs(t, "--pods", pods, "--nodepools", with, "--instance-types", sampleCatalog)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "with.yaml: document 3: NodeOverlay/savings-plan: kind: Forbidden: NodeOverlay is alpha in Karpenter and its feature gate NodeOverlay is off")

	code, out, errOut := runValidateArgs(t, "", "-f", with)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "NodeOverlay/savings-plan: kind: Forbidden")
	code, out, errOut = runValidateArgs(t, "", "-f", with, "--feature-gates", "NodeOverlay=true")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "1 NodePool, 1 EC2NodeClass, 1 NodeOverlay valid\n", out)

	bad := writeOverlayFile(t, dir, "bad.yaml", overlayPools+strings.ReplaceAll(savingsPlan, `"-30%"`, `"30%"`))
	code, _, errOut = runValidateArgs(t, "", "-f", bad, "--feature-gates", "NodeOverlay=true")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `NodeOverlay/savings-plan: spec.priceAdjustment: Invalid value: "30%"`)

	code, _, errOut = runValidateArgs(t, "", "-f", with, "--feature-gates", "NodeOverlay=maybe")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--feature-gates:")
}
