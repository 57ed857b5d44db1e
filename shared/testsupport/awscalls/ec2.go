package awscalls

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// ec2Resource is the ARN of an EC2 resource by its id; images and snapshots are public, in no account.
func (r *request) ec2Resource(kind, id string) string {
	account := r.account
	if kind == "image" || kind == "snapshot" {
		account = ""
	}
	return r.arn("ec2", r.region, account, kind+"/"+id)
}

// kindOf is the resource type of an EC2 id, from its prefix.
func kindOf(id string) string {
	for prefix, kind := range map[string]string{"i-": "instance", "lt-": "launch-template", "vol-": "volume",
		"eni-": "network-interface", "fleet-": "fleet", "ami-": "image", "snap-": "snapshot", "subnet-": "subnet",
		"sg-": "security-group", "sir-": "spot-instances-request", "cr-": "capacity-reservation"} {
		if strings.HasPrefix(id, prefix) {
			return kind
		}
	}
	return "unknown"
}

func (r *request) ec2(params interface{}) bool {
	switch in := params.(type) {
	case *ec2.TerminateInstancesInput:
		tags := r.tags.ec2Tags(r, in.InstanceIds)
		for _, id := range in.InstanceIds {
			r.add("ec2:TerminateInstances", r.ec2Resource("instance", id), tagContext(nil, "aws:ResourceTag", tags[id]))
		}
	case *ec2.CreateTagsInput:
		tags := r.tags.ec2Tags(r, in.Resources)
		for _, id := range in.Resources {
			ctx := tagContext(requestTags(in.Tags), "aws:ResourceTag", tags[id])
			r.add("ec2:CreateTags", r.ec2Resource(kindOf(id), id), ctx)
		}
	case *ec2.DeleteLaunchTemplateInput:
		lt := r.tags.launchTemplate(r, in.LaunchTemplateId, in.LaunchTemplateName, nil)
		r.add("ec2:DeleteLaunchTemplate", r.ec2Resource("launch-template", lt.id), tagContext(nil, "aws:ResourceTag", lt.tags))
	case *ec2.CreateLaunchTemplateInput:
		created := specTags(in.TagSpecifications)
		ctx := requestTags(mapTags(created[ec2types.ResourceTypeLaunchTemplate]))
		r.add("ec2:CreateLaunchTemplate", r.ec2Resource("launch-template", "*"), ctx)
		if len(created[ec2types.ResourceTypeLaunchTemplate]) > 0 {
			r.add("ec2:CreateTags", r.ec2Resource("launch-template", "*"), withAction(ctx, "CreateLaunchTemplate"))
		}
	case *ec2.CreateFleetInput:
		r.createFleet(in)
	default:
		return false
	}
	return true
}

// createFleet authorises an instant fleet as EC2 does: CreateFleet and RunInstances on the fleet, the
// instances, volumes and network interfaces it creates (with the tags of the request and of the launch
// template), on each launch template and the image, subnets and security groups the launch uses, tag-on-
// create for what it tags, and passing the role of the template's instance profile.
func (r *request) createFleet(in *ec2.CreateFleetInput) {
	created := specTags(in.TagSpecifications)
	var used []string // ARNs of existing resources the launch reads, with no tags needed
	usedTags := map[string]map[string]string{}
	for _, cfg := range in.LaunchTemplateConfigs {
		spec := cfg.LaunchTemplateSpecification
		if spec == nil {
			continue
		}
		lt := r.tags.launchTemplate(r, spec.LaunchTemplateId, spec.LaunchTemplateName, spec.Version)
		arn := r.ec2Resource("launch-template", lt.id)
		used, usedTags[arn] = append(used, arn), lt.tags
		for rt, tags := range lt.data.tags {
			for k, v := range tags {
				if created[rt] == nil {
					created[rt] = map[string]string{}
				}
				if _, set := created[rt][k]; !set {
					created[rt][k] = v
				}
			}
		}
		image := lt.data.image
		for _, o := range cfg.Overrides {
			if o.SubnetId != nil {
				used = append(used, r.ec2Resource("subnet", *o.SubnetId))
			}
			if o.ImageId != nil {
				image = *o.ImageId
			}
		}
		if image != "" {
			used = append(used, r.ec2Resource("image", image))
		}
		for _, sg := range lt.data.securityGroups {
			used = append(used, r.ec2Resource("security-group", sg))
		}
		for _, role := range lt.data.roles {
			r.add("iam:PassRole", r.arn("iam", "", r.account, "role/"+role), map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}})
		}
	}
	for _, action := range []string{"ec2:CreateFleet", "ec2:RunInstances"} {
		for _, rt := range []ec2types.ResourceType{ec2types.ResourceTypeFleet, ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface} {
			if rt == ec2types.ResourceTypeFleet && action == "ec2:RunInstances" {
				continue
			}
			r.add(action, r.ec2Resource(string(rt), "*"), requestTags(mapTags(created[rt])))
		}
		for _, arn := range uniq(used) {
			r.add(action, arn, tagContext(nil, "aws:ResourceTag", usedTags[arn]))
		}
	}
	for _, rt := range []ec2types.ResourceType{ec2types.ResourceTypeFleet, ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface} {
		if len(created[rt]) > 0 {
			r.add("ec2:CreateTags", r.ec2Resource(string(rt), "*"), withAction(requestTags(mapTags(created[rt])), "CreateFleet"))
		}
	}
}

// requestTags are the condition keys of tags in a request: aws:RequestTag/<k> and aws:TagKeys.
func requestTags(tags []ec2types.Tag) map[string][]string {
	ctx := map[string][]string{}
	var keys []string
	for _, t := range tags {
		ctx["aws:RequestTag/"+aws.ToString(t.Key)] = []string{aws.ToString(t.Value)}
		keys = append(keys, aws.ToString(t.Key))
	}
	if len(keys) > 0 {
		ctx["aws:TagKeys"] = keys
	}
	return ctx
}

func withAction(ctx map[string][]string, action string) map[string][]string {
	out := map[string][]string{"ec2:CreateAction": {action}}
	for k, v := range ctx {
		out[k] = v
	}
	return out
}

// specTags are the tags a request's TagSpecifications give each resource type.
func specTags(specs []ec2types.TagSpecification) map[ec2types.ResourceType]map[string]string {
	out := map[ec2types.ResourceType]map[string]string{}
	for _, s := range specs {
		if out[s.ResourceType] == nil {
			out[s.ResourceType] = map[string]string{}
		}
		for k, v := range ec2Tags(s.Tags) {
			out[s.ResourceType][k] = v
		}
	}
	return out
}

func mapTags(m map[string]string) []ec2types.Tag {
	var tags []ec2types.Tag
	for _, k := range sortedKeys(m) {
		tags = append(tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return tags
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
