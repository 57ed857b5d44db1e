package scalebench

import (
	"fmt"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/sandbox"
)

// Config is the benchmark cluster's NodePools and EC2NodeClass, as an administrator of a large cluster
// writes them: an on-demand general pool, a spot pool and a system pool over the same c/m/r types of
// generation 5 and later, limits far above the tiers, consolidation on (Karpenter's default
// consolidateAfter of 0s for the general and spot pools, so a cold disruption run has candidates).
// Subnets, security groups and the
// AMI are found by the sandbox's discovery tags (sandbox.BuildAWS creates them).
const Config = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  weight: 50
  template:
    metadata:
      labels:
        workload-class: general
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
  limits:
    cpu: "200000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spot
spec:
  weight: 60
  template:
    metadata:
      labels:
        workload-class: spot
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["spot"]}
  limits:
    cpu: "200000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: system
spec:
  weight: 10
  template:
    metadata:
      labels:
        workload-class: system
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
  limits:
    cpu: "50000"
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
---
` + sandbox.SampleNodeClass

// hashes are what a claim launched from Config records: each NodePool's template hash and the
// EC2NodeClass's hash, computed as `nodewright apply` stores them, so no loaded claim looks drifted.
type hashes struct {
	pools map[string]string
	class string
	// expireAfter is each NodePool's defaulted expireAfter as a claim stores it.
	expireAfter map[string]string
}

func configHashes() (hashes, error) {
	objs, err := apis.Decode("scalebench.yaml", []byte(Config))
	if err != nil {
		return hashes{}, err
	}
	if errs := apis.DefaultAndValidate(objs); len(errs) > 0 {
		return hashes{}, fmt.Errorf("benchmark configuration: %v", errs)
	}
	h := hashes{pools: map[string]string{}, expireAfter: map[string]string{}}
	for _, np := range objs.NodePools {
		h.pools[np.Name] = apis.NodePoolTemplateHash(np)
		if d := np.Spec.Template.Spec.ExpireAfter.Duration(); d != nil {
			h.expireAfter[np.Name] = d.String()
		}
	}
	for _, nc := range objs.EC2NodeClasses {
		h.class = apis.EC2NodeClassHash(nc)
	}
	return h, nil
}
