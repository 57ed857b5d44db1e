package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awseks"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
)

// ClusterAccess gives the functions' roles their Kubernetes identity: one EKS access entry per role, in
// that function's own group, which its ClusterRoleBinding binds to its own ClusterRole (`nodewright
// manifests` prints them). So each function can do in the cluster only what its code does; only
// termination deletes Nodes and pods. The cluster's authentication mode must be API or API_AND_CONFIG_MAP.
type ClusterAccess struct {
	constructs.Construct
	Entries map[string]awseks.CfnAccessEntry
}

// FunctionRole is a function's IAM role and the function it is, which names its Kubernetes group.
type FunctionRole struct {
	Function footprint.Function
	Role     awsiam.IRole
}

// NewClusterAccess creates an access entry in cluster for each role, keyed by the construct id it gets.
func NewClusterAccess(scope constructs.Construct, id, cluster string, roles map[string]FunctionRole) *ClusterAccess {
	c := constructs.NewConstruct(scope, jsii.String(id))
	a := &ClusterAccess{Construct: c, Entries: map[string]awseks.CfnAccessEntry{}}
	for _, name := range sortedKeys(roles) {
		a.Entries[name] = awseks.NewCfnAccessEntry(c, jsii.String(name), &awseks.CfnAccessEntryProps{
			ClusterName:      jsii.String(cluster),
			PrincipalArn:     roles[name].Role.RoleArn(),
			KubernetesGroups: jsii.Strings(roles[name].Function.Group()),
			Type:             jsii.String("STANDARD"),
		})
	}
	return a
}

func sortedKeys[V any](m map[string]V) []string {
	set := make(map[string]bool, len(m))
	for k := range m {
		set[k] = true
	}
	return sorted(set)
}
