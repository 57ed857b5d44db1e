package awscalls

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go"
)

// tagReader reads the tags and launch data of existing resources with clients that record nothing.
type tagReader struct {
	ec2c *ec2.Client
	iamc *iam.Client
}

func newTagReader(cfg aws.Config) *tagReader {
	return &tagReader{ec2c: ec2.NewFromConfig(cfg), iamc: iam.NewFromConfig(cfg)}
}

// notFound is whether err says the resource does not exist: it then has no tags, and a condition on
// them fails, as it would in IAM.
func notFound(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode() {
	case "NoSuchEntity", "InvalidLaunchTemplateName.NotFoundException", "InvalidLaunchTemplateId.NotFound",
		"InvalidLaunchTemplateId.Malformed", "InvalidInstanceID.NotFound", "InvalidID":
		return true
	}
	return false
}

// ec2 returns the tags of each EC2 resource id.
func (t *tagReader) ec2Tags(r *request, ids []string) map[string]map[string]string {
	out := map[string]map[string]string{}
	if len(ids) == 0 {
		return out
	}
	p := ec2.NewDescribeTagsPaginator(t.ec2c, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{{Name: aws.String("resource-id"), Values: ids}}})
	for p.HasMorePages() {
		page, err := p.NextPage(r.ctx)
		if err != nil {
			r.lookups = append(r.lookups, fmt.Sprintf("tags of %v: %v", ids, err))
			return out
		}
		for _, tag := range page.Tags {
			id := aws.ToString(tag.ResourceId)
			if out[id] == nil {
				out[id] = map[string]string{}
			}
			out[id][aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
	}
	return out
}

// profileTags returns the aws:ResourceTag keys of an instance profile.
func (r *request) profileTags(name string) map[string][]string {
	// GetInstanceProfile returns the tags too (moto does not implement ListInstanceProfileTags).
	out, err := r.tags.iamc.GetInstanceProfile(r.ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		if !notFound(err) {
			r.lookups = append(r.lookups, fmt.Sprintf("tags of instance profile %s: %v", name, err))
		}
		return nil
	}
	tags := map[string]string{}
	for _, tag := range out.InstanceProfile.Tags {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return tagContext(nil, "aws:ResourceTag", tags)
}

// template is a launch template as a launch from it is authorised.
type template struct {
	id   string
	tags map[string]string
	data templateData
}

type templateData struct {
	image          string
	securityGroups []string
	roles          []string // of the instance profile
	tags           map[ec2types.ResourceType]map[string]string
}

// launchTemplate finds a launch template by id or name; with version it also reads that version's data.
// A template that does not exist has no tags; its name stands in for the id.
func (t *tagReader) launchTemplate(r *request, id, name, version *string) template {
	in := &ec2.DescribeLaunchTemplatesInput{}
	lt := template{id: aws.ToString(id)}
	if id != nil {
		in.LaunchTemplateIds = []string{*id}
	} else {
		in.LaunchTemplateNames = []string{aws.ToString(name)}
		lt.id = "name:" + aws.ToString(name)
	}
	out, err := t.ec2c.DescribeLaunchTemplates(r.ctx, in)
	if err != nil || len(out.LaunchTemplates) == 0 {
		if err != nil && !notFound(err) {
			r.lookups = append(r.lookups, fmt.Sprintf("launch template %s: %v", lt.id, err))
		}
		return lt
	}
	found := out.LaunchTemplates[0]
	lt.id, lt.tags = aws.ToString(found.LaunchTemplateId), ec2Tags(found.Tags)
	if version == nil {
		return lt
	}
	vs, err := t.ec2c.DescribeLaunchTemplateVersions(r.ctx, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateId: found.LaunchTemplateId, Versions: []string{*version}})
	if err != nil || len(vs.LaunchTemplateVersions) == 0 || vs.LaunchTemplateVersions[0].LaunchTemplateData == nil {
		r.lookups = append(r.lookups, fmt.Sprintf("launch template %s version %s: %v", lt.id, *version, err))
		return lt
	}
	d := vs.LaunchTemplateVersions[0].LaunchTemplateData
	lt.data.image = aws.ToString(d.ImageId)
	lt.data.securityGroups = append(lt.data.securityGroups, d.SecurityGroupIds...)
	for _, ni := range d.NetworkInterfaces {
		lt.data.securityGroups = append(lt.data.securityGroups, ni.Groups...)
	}
	lt.data.tags = map[ec2types.ResourceType]map[string]string{}
	for _, s := range d.TagSpecifications {
		lt.data.tags[s.ResourceType] = ec2Tags(s.Tags)
	}
	if d.IamInstanceProfile != nil && d.IamInstanceProfile.Name != nil {
		p, err := t.iamc.GetInstanceProfile(r.ctx, &iam.GetInstanceProfileInput{InstanceProfileName: d.IamInstanceProfile.Name})
		if err != nil {
			r.lookups = append(r.lookups, fmt.Sprintf("instance profile %s: %v", *d.IamInstanceProfile.Name, err))
			return lt
		}
		for _, role := range p.InstanceProfile.Roles {
			lt.data.roles = append(lt.data.roles, aws.ToString(role.RoleName))
		}
	}
	return lt
}
