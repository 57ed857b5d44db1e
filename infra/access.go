package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awseks"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/footprint"
)

// ClusterAccess gives the functions' roles their Kubernetes identity: one EKS access entry per role,
// in the group the footprint's ClusterRoleBinding binds (`nodewright manifests` prints it). The cluster's
// authentication mode must be API or API_AND_CONFIG_MAP.
type ClusterAccess struct {
	constructs.Construct
	Entries map[string]awseks.CfnAccessEntry
}

// NewClusterAccess creates an access entry in cluster for each role, keyed by the construct id it gets.
func NewClusterAccess(scope constructs.Construct, id, cluster string, roles map[string]awsiam.IRole) *ClusterAccess {
	c := constructs.NewConstruct(scope, jsii.String(id))
	a := &ClusterAccess{Construct: c, Entries: map[string]awseks.CfnAccessEntry{}}
	for _, name := range sortedKeys(roles) {
		a.Entries[name] = awseks.NewCfnAccessEntry(c, jsii.String(name), &awseks.CfnAccessEntryProps{
			ClusterName:      jsii.String(cluster),
			PrincipalArn:     roles[name].RoleArn(),
			KubernetesGroups: jsii.Strings(footprint.Group),
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
