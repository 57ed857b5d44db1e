package nodeclass

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// image is a candidate AMI with what its choice depends on.
type image struct {
	status   apis.AMIStatus
	created  time.Time
	sortKeys string // requirement set identity
}

// amis resolves the AMI selector terms: through public SSM parameters for an alias, through
// DescribeImages for ids, names, tags and owners, through a named SSM parameter for ssmParameter. For each
// requirement set (architecture, GPU or Neuron variant) it keeps the newest AMI, preferring non-deprecated
// ones.
func (r *Resolver) amis(ctx context.Context, nc *apis.EC2NodeClass, k8sVersion string) ([]apis.AMIStatus, error) {
	var candidates []image
	if alias, ok := nc.Alias(); ok {
		params, err := aliasParameters(alias, k8sVersion)
		if err != nil {
			return nil, errNotResolvable{err}
		}
		for _, p := range params {
			id, err := r.parameter(ctx, p.path)
			if err != nil {
				return nil, err
			}
			if id == "" {
				continue // this variant is not published for the version
			}
			imgs, err := r.describeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}}, p.requirements)
			if err != nil {
				return nil, err
			}
			candidates = append(candidates, imgs...)
		}
		return newestPerRequirements(candidates), nil
	}
	for _, term := range nc.Spec.AMISelectorTerms {
		var in *ec2.DescribeImagesInput
		switch {
		case term.ID != "":
			in = &ec2.DescribeImagesInput{ImageIds: []string{term.ID}}
		case term.SSMParameter != "":
			id, err := r.parameter(ctx, term.SSMParameter)
			if err != nil || id == "" {
				return nil, err
			}
			in = &ec2.DescribeImagesInput{ImageIds: []string{id}}
		default:
			in = &ec2.DescribeImagesInput{Filters: tagFilters(term.Tags), Owners: apis.DefaultAMIOwners}
			if term.Owner != "" {
				in.Owners = []string{term.Owner}
			}
			if term.Name != "" {
				in.Filters = append(in.Filters, ec2types.Filter{Name: aws.String("name"), Values: []string{term.Name}})
			}
		}
		imgs, err := r.describeImages(ctx, in, nil)
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, imgs...)
	}
	return newestPerRequirements(candidates), nil
}

// parameter reads an SSM parameter; a missing one is "" without error.
func (r *Resolver) parameter(ctx context.Context, name string) (string, error) {
	out, err := r.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		if notFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading SSM parameter %s: %w", name, err)
	}
	return aws.ToString(out.Parameter.Value), nil
}

// describeImages returns the images of in, one candidate per requirement set in reqSets (an image that
// serves several variants is a candidate for each); nil reqSets become the image's architecture.
func (r *Resolver) describeImages(ctx context.Context, in *ec2.DescribeImagesInput, reqSets [][]corev1.NodeSelectorRequirement) ([]image, error) {
	var out []image
	pager := ec2.NewDescribeImagesPaginator(r.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			if notFound(err) {
				return out, nil
			}
			return nil, fmt.Errorf("describing images: %w", err)
		}
		for _, im := range page.Images {
			arch, ok := map[ec2types.ArchitectureValues]string{ec2types.ArchitectureValuesX8664: "amd64", ec2types.ArchitectureValuesArm64: "arm64"}[im.Architecture]
			if !ok {
				continue // Macs and i386 images cannot be EKS nodes
			}
			sets := reqSets
			if sets == nil {
				sets = [][]corev1.NodeSelectorRequirement{{archIs(arch)}}
			}
			created, _ := time.Parse(time.RFC3339, aws.ToString(im.CreationDate))
			deprecated := false
			if dt, err := time.Parse(time.RFC3339, aws.ToString(im.DeprecationTime)); err == nil {
				deprecated = !dt.After(r.now())
			}
			for _, rs := range sets {
				out = append(out, image{
					status:   apis.AMIStatus{ID: aws.ToString(im.ImageId), Name: aws.ToString(im.Name), Deprecated: deprecated, Requirements: rs},
					created:  created,
					sortKeys: requirementsKey(rs),
				})
			}
		}
	}
	return out, nil
}

// newestPerRequirements keeps one AMI per requirement set: non-deprecated before deprecated, then the
// newest, then the smallest id, so the choice is deterministic.
func newestPerRequirements(images []image) []apis.AMIStatus {
	sort.SliceStable(images, func(i, j int) bool {
		a, b := images[i], images[j]
		if a.sortKeys != b.sortKeys {
			return a.sortKeys < b.sortKeys
		}
		if a.status.Deprecated != b.status.Deprecated {
			return !a.status.Deprecated
		}
		if !a.created.Equal(b.created) {
			return a.created.After(b.created)
		}
		return a.status.ID < b.status.ID
	})
	var out []apis.AMIStatus
	for i, im := range images {
		if i == 0 || im.sortKeys != images[i-1].sortKeys {
			out = append(out, im.status)
		}
	}
	return out
}

func requirementsKey(reqs []corev1.NodeSelectorRequirement) string {
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.Key + string(r.Operator) + strings.Join(r.Values, ",")
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// errNotResolvable marks a selector that can never resolve (e.g. an alias for an unsupported version):
// a condition, not an API failure.
type errNotResolvable struct{ error }

func (e errNotResolvable) Unwrap() error { return e.error }

func isNotResolvable(err error) bool {
	var nr errNotResolvable
	return errors.As(err, &nr)
}
