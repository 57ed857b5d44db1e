package nodeclass

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// profileWorld is an IAM account in moto with one node role.
type profileWorld struct {
	t   *testing.T
	cfg aws.Config
	iam *iam.Client
}

func newProfileWorld(t *testing.T) profileWorld {
	cfg := awstest.Shared(t).Config()
	w := profileWorld{t: t, cfg: cfg, iam: iam.NewFromConfig(cfg)}
	_, err := w.iam.CreateRole(context.Background(), &iam.CreateRoleInput{RoleName: aws.String("NodeRole"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	require.NoError(t, err)
	return w
}

// managed makes the profile the resolver manages for class in cluster and region, holding the node role.
func (w profileWorld) managed(cluster, region, class string) string {
	w.t.Helper()
	r := &Resolver{iam: w.iam, cluster: cluster, region: region}
	nc := &apis.EC2NodeClass{}
	nc.Name, nc.Spec.Role = class, "NodeRole"
	name, err := r.instanceProfile(context.Background(), nc)
	require.NoError(w.t, err)
	return name
}

// foreign makes a profile with the node role and tags (key, value pairs).
func (w profileWorld) foreign(name string, kv ...string) {
	w.t.Helper()
	ctx := context.Background()
	var tags []iamtypes.Tag
	for i := 0; i < len(kv); i += 2 {
		tags = append(tags, iamtypes.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	_, err := w.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name), Tags: tags})
	require.NoError(w.t, err)
	_, err = w.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String("NodeRole")})
	require.NoError(w.t, err)
}

func (w profileWorld) names() []string {
	w.t.Helper()
	out, err := w.iam.ListInstanceProfiles(context.Background(), &iam.ListInstanceProfilesInput{})
	require.NoError(w.t, err)
	var names []string
	for _, ip := range out.InstanceProfiles {
		names = append(names, aws.ToString(ip.InstanceProfileName))
	}
	return names
}

func TestDeleteUnusedProfiles(t *testing.T) {
	ctx := context.Background()
	w := newProfileWorld(t)
	kept := w.managed("prod", "us-east-1", "default")
	removed := w.managed("prod", "us-east-1", "gpu")
	otherRegion := w.managed("prod", "eu-west-1", "gpu")     // same cluster name, another region's deployment
	otherCluster := w.managed("staging", "us-east-1", "gpu") // another cluster in the account
	w.foreign("KarpenterNodeInstanceProfile-prod", "karpenter.k8s.aws/ec2nodeclass", "gpu", "eks:eks-cluster-name", "prod",
		"kubernetes.io/cluster/prod", "owned")
	w.foreign("prod_1234567890") // Karpenter's naming, untagged
	untagged := InstanceProfileName("prod", "us-east-1", "old")
	w.foreign(untagged) // named as Nodewright names them, but without its tags
	lookalike := InstanceProfileName("prod", "us-east-1", "spot")
	w.foreign(lookalike, "karpenter.k8s.aws/ec2nodeclass", "spot", "eks:eks-cluster-name", "prod")

	// The lifecycle function's own client: with $NODEWRIGHT_AWS_CALLS set its calls are recorded for
	// infra's IAM proof of the lifecycle role (the set-up above is not).
	lifecycle := iam.NewFromConfig(awscalls.Instrument(w.cfg,
		awscalls.Deployment{Cluster: "prod", Account: awstest.AccountID, Manifests: awscalls.SampleManifests}, "lifecycle"))
	deleted, err := NewProfiles(lifecycle, "prod", "us-east-1").DeleteUnused(ctx, map[string]bool{"default": true})
	require.NoError(t, err)
	assert.Equal(t, []string{removed}, deleted)
	assert.ElementsMatch(t, []string{kept, otherRegion, otherCluster, "KarpenterNodeInstanceProfile-prod", "prod_1234567890",
		untagged, lookalike}, w.names())

	roles, err := w.iam.ListRoles(ctx, &iam.ListRolesInput{})
	require.NoError(t, err)
	require.Len(t, roles.Roles, 1, "the role the profile held stays")

	again, err := NewProfiles(w.iam, "prod", "us-east-1").DeleteUnused(ctx, map[string]bool{"default": true})
	require.NoError(t, err)
	assert.Empty(t, again)
}

func TestDeleteUnusedProfilesKeepsEveryKeptClass(t *testing.T) {
	w := newProfileWorld(t)
	a := w.managed("prod", "us-east-1", "a")
	b := w.managed("prod", "us-east-1", "b")
	deleted, err := NewProfiles(w.iam, "prod", "us-east-1").DeleteUnused(context.Background(), map[string]bool{"a": true, "b": true})
	require.NoError(t, err)
	assert.Empty(t, deleted)
	assert.ElementsMatch(t, []string{a, b}, w.names())
}
