package nodeclass

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// ProfileAPI is the part of IAM that deleting unused instance profiles needs; *iam.Client satisfies it.
type ProfileAPI interface {
	iam.ListInstanceProfilesAPIClient
	GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	RemoveRoleFromInstanceProfile(ctx context.Context, in *iam.RemoveRoleFromInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.RemoveRoleFromInstanceProfileOutput, error)
	DeleteInstanceProfile(ctx context.Context, in *iam.DeleteInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.DeleteInstanceProfileOutput, error)
}

var _ ProfileAPI = (*iam.Client)(nil)

// Profiles deletes the instance profiles Nodewright made for one cluster's EC2NodeClasses in one region
// once nothing uses them.
type Profiles struct {
	iam             ProfileAPI
	cluster, region string
}

// NewProfiles returns the instance profiles of cluster in region.
func NewProfiles(api ProfileAPI, cluster, region string) *Profiles {
	return &Profiles{iam: api, cluster: cluster, region: region}
}

// DeleteUnused deletes the instance profiles Nodewright made for node classes keep does not name, and
// returns their names. A profile is Nodewright's for this cluster and region only when all hold: it is
// tagged nodewright.sh/cluster=<cluster>, it is tagged nodewright.sh/ec2nodeclass=<class>, and its name is
// InstanceProfileName(cluster, region, class) (so a profile of the same cluster name in another region,
// which IAM lists too, is left alone). Profiles an EC2NodeClass names in spec.instanceProfile, and every
// other profile, are never touched. Each role is removed from the profile before it is deleted; a
// profile already gone is not an error. The error is the first failed call; the names deleted before it
// are returned with it.
//
// keep holds the node classes whose profiles must stay: the caller's configured classes that use a role
// and the classes of live claims and instances (deleting a profile takes the credentials from the
// instances that run with it).
func (p *Profiles) DeleteUnused(ctx context.Context, keep map[string]bool) ([]string, error) {
	prefix := "nodewright_" + p.cluster + "_"
	pages := iam.NewListInstanceProfilesPaginator(p.iam, &iam.ListInstanceProfilesInput{})
	var candidates []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing instance profiles: %w", err)
		}
		for _, ip := range page.InstanceProfiles {
			if name := aws.ToString(ip.InstanceProfileName); strings.HasPrefix(name, prefix) {
				candidates = append(candidates, name)
			}
		}
	}
	var deleted []string
	for _, name := range candidates {
		gone, err := p.deleteIfUnused(ctx, name, keep)
		if err != nil {
			return deleted, err
		}
		if gone {
			deleted = append(deleted, name)
		}
	}
	return deleted, nil
}

// deleteIfUnused reads the profile's tags (IAM's list leaves them out) and deletes it if it is ours and
// not kept.
func (p *Profiles) deleteIfUnused(ctx context.Context, name string, keep map[string]bool) (bool, error) {
	out, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if isNoSuchEntity(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading instance profile %s: %w", name, err)
	}
	tags := map[string]string{}
	for _, t := range out.InstanceProfile.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	class, tagged := tags[instance.TagNodeClass]
	if tags[instance.TagCluster] != p.cluster || !tagged || InstanceProfileName(p.cluster, p.region, class) != name || keep[class] {
		return false, nil
	}
	for _, role := range out.InstanceProfile.Roles {
		_, err := p.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: role.RoleName})
		if err != nil && !isNoSuchEntity(err) {
			return false, fmt.Errorf("removing role %s from instance profile %s: %w", aws.ToString(role.RoleName), name, err)
		}
	}
	_, err = p.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil && !isNoSuchEntity(err) {
		return false, fmt.Errorf("deleting instance profile %s: %w", name, err)
	}
	return err == nil, nil
}
