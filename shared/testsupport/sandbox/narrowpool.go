package sandbox

import "fmt"

// narrowPoolConfig is the NodePool the disruption scenarios run on: the sample pool narrowed to 4- and
// 8-vCPU instance types, so 30 one-CPU pods need several nodes, under a budget of two nodes at a time.
// labels are the template's labels as YAML flow-map entries ("" for none); expireAfter and
// consolidateAfter are the NodePool's.
func narrowPoolConfig(labels, expireAfter, consolidateAfter string) string {
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels: {%s}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: %s
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: In, values: ["4", "8"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["spot", "on-demand"]}
  limits:
    cpu: "1000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: %s
    budgets:
      - nodes: "2"
`, labels, expireAfter, consolidateAfter)
}
