package nodeclass

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// InstanceProfileName is the profile Nodewright manages for a node class that names a role: one per
// cluster, region and node class, at most 128 characters.
func InstanceProfileName(cluster, region, nodeClass string) string {
	sum := sha256.Sum256([]byte(region + "/" + nodeClass))
	name := "nodewright_" + cluster + "_" + hex.EncodeToString(sum[:8])
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

// instanceProfile makes sure the class has an instance profile: the one it names must exist; for a role,
// the managed profile is created and given that role (replacing another role if the class changed it).
// errNotResolvable says what is missing. Without IAM (WithoutIAM) a named profile is taken as it is.
func (r *Resolver) instanceProfile(ctx context.Context, nc *apis.EC2NodeClass) (string, error) {
	switch {
	case r.noIAM && nc.Spec.InstanceProfile != nil:
		return *nc.Spec.InstanceProfile, nil
	case r.noIAM:
		return "", errNotResolvable{fmt.Errorf("spec.role %s needs an instance profile created through the IAM API, which has no VPC "+
			"endpoint and cannot be reached from an isolated VPC: name an existing spec.instanceProfile instead", nc.Spec.Role)}
	}
	if nc.Spec.InstanceProfile != nil {
		name := *nc.Spec.InstanceProfile
		if _, err := r.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil {
			if isNoSuchEntity(err) {
				return "", errNotResolvable{fmt.Errorf("instance profile %s does not exist", name)}
			}
			return "", fmt.Errorf("reading instance profile %s: %w", name, err)
		}
		return name, nil
	}
	name := InstanceProfileName(r.cluster, r.region, nc.Name)
	out, err := r.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	var profile *iamtypes.InstanceProfile
	switch {
	case err == nil:
		profile = out.InstanceProfile
	case isNoSuchEntity(err):
		created, err := r.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
			InstanceProfileName: aws.String(name),
			Tags: []iamtypes.Tag{
				{Key: aws.String(instance.TagCluster), Value: aws.String(r.cluster)},
				{Key: aws.String(instance.TagNodeClass), Value: aws.String(nc.Name)},
			},
		})
		if err != nil && !isAlreadyExists(err) {
			return "", fmt.Errorf("creating instance profile %s: %w", name, err)
		}
		if created != nil {
			profile = created.InstanceProfile
		}
	default:
		return "", fmt.Errorf("reading instance profile %s: %w", name, err)
	}
	if profile != nil {
		for _, role := range profile.Roles {
			if aws.ToString(role.RoleName) == nc.Spec.Role {
				return name, nil
			}
			if _, err := r.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
				InstanceProfileName: aws.String(name), RoleName: role.RoleName}); err != nil && !isNoSuchEntity(err) {
				return "", fmt.Errorf("removing role %s from %s: %w", aws.ToString(role.RoleName), name, err)
			}
		}
	}
	if _, err := r.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String(name), RoleName: aws.String(nc.Spec.Role)}); err != nil {
		if isNoSuchEntity(err) {
			return "", errNotResolvable{fmt.Errorf("role %s does not exist", nc.Spec.Role)}
		}
		if !isLimitExceeded(err) {
			return "", fmt.Errorf("adding role %s to %s: %w", nc.Spec.Role, name, err)
		}
	}
	return name, nil
}

func isNoSuchEntity(err error) bool {
	var e *iamtypes.NoSuchEntityException
	return errors.As(err, &e) || apiCode(err) == "NoSuchEntity"
}

func isAlreadyExists(err error) bool {
	var e *iamtypes.EntityAlreadyExistsException
	return errors.As(err, &e) || apiCode(err) == "EntityAlreadyExists"
}

// isLimitExceeded is what IAM answers when the profile already holds a role (a concurrent resolve won).
func isLimitExceeded(err error) bool {
	var e *iamtypes.LimitExceededException
	return errors.As(err, &e) || apiCode(err) == "LimitExceeded"
}
