package main

import (
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
)

// allowHousekeeping lets the lifecycle role delete the launch templates and instance profiles no claim
// uses any more: only those tagged nodewright.sh/cluster=<cluster>, and for profiles only those named
// with the cluster's prefix. Listing them needs the reads in lifecycleEC2Reads and ListInstanceProfiles.
func allowHousekeeping(role awsiam.Role, cluster string) {
	resourceOwned := ownedBy("ResourceTag", cluster)
	allow(role, "DeleteOwnedTemplates", []string{"ec2:DeleteLaunchTemplate"}, []string{ec2Arn(role, "launch-template", true)},
		conditions{"StringEquals": resourceOwned})

	stack := awscdk.Stack_Of(role)
	profiles := func(name string) string {
		return *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("iam"), Region: jsii.String(""),
			Resource: jsii.String("instance-profile"), ResourceName: jsii.String(name)})
	}
	managed := profiles(instanceProfilePrefix(cluster) + "*")
	// IAM authorises a list by the path it covers, so the list cannot be narrowed to the managed names.
	allow(role, "ListInstanceProfiles", []string{"iam:ListInstanceProfiles"}, []string{profiles("*")}, nil)
	allow(role, "ReadManagedInstanceProfilesTags", []string{"iam:GetInstanceProfile"}, []string{managed}, nil)
	allow(role, "DeleteOwnedInstanceProfiles", []string{"iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
		[]string{managed}, conditions{"StringEquals": resourceOwned})

	suppressWildcards(role, "The lifecycle deletes only the launch templates it finds tagged nodewright.sh/cluster=<name> "+
		"(the condition requires that tag on the template), and only the instance profiles named "+
		instanceProfilePrefix(cluster)+"<hash> that carry the same tag; iam:ListInstanceProfiles is authorised by "+
		"path and cannot be narrowed by name.",
		arnWildcard("ec2", `launch-template\/\*`, true),
		arnWildcard("iam", `instance-profile\/`+regexp.QuoteMeta(instanceProfilePrefix(cluster))+`\*`, true),
		arnWildcard("iam", `instance-profile\/\*`, true))
}

// allowStampOwnedTemplates lets role mark the cluster's launch templates used (launchtemplate.Ensure):
// only the nodewright.sh/last-used tag, only on templates tagged nodewright.sh/cluster=<cluster>.
func allowStampOwnedTemplates(role awsiam.Role, cluster string) {
	allow(role, "MarkOwnedTemplatesUsed", []string{"ec2:CreateTags"}, []string{ec2Arn(role, "launch-template", true)},
		conditions{
			"StringEquals":              ownedBy("ResourceTag", cluster),
			"ForAllValues:StringEquals": map[string]interface{}{"aws:TagKeys": []string{launchtemplate.TagLastUsed}},
		})
}
