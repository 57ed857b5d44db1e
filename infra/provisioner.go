package main

import (
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// Provisioner is the single-writer provisioning function: woken by the provisioning FIFO queue and by a
// one-minute backstop schedule, it launches instances for pending pods.
type Provisioner struct {
	constructs.Construct
	Function *GoFunction
}

// provisionerEC2Reads are the EC2 reads of node class resolution, the instance type catalog, launch
// templates and launched instances. None supports resource-level permissions.
var provisionerEC2Reads = []string{
	"ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes",
	"ec2:DescribeLaunchTemplates", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
	"ec2:DescribeCapacityReservations",
}

// NewProvisioner creates the function, its triggers and its permissions; nodes names the roles and
// instance profiles the deployed EC2NodeClasses give instances.
func NewProvisioner(scope constructs.Construct, id string, p WorkerProps, queue awssqs.Queue, nodes NodeIdentities) *Provisioner {
	c := constructs.NewConstruct(scope, jsii.String(id))
	timeout := awscdk.Duration_Seconds(jsii.Number(60))
	fn := newWorker(c, "Handler", p, workerSpec{
		name: "provisioner", timeout: timeout, reserved: singleWriterConcurrency, prices: true,
		// BatchWriteItem: the decision records of pods that cannot be provisioned (state.RecordDecisions).
		stateAccess: stateAccess(stateRead, stateWrite, []string{"dynamodb:BatchWriteItem"}, claimCreate, claimView),
	})
	// FIFO queues allow no batching window; the messages only wake the run up anyway.
	consume(fn, queue, queueTrigger{batchSize: 10, pollers: queuePollers}, timeout)
	everyMinute(fn, "Nodewright provisioning backstop for cluster "+p.ClusterName)
	allowProvisionerEC2(fn.Role, p.ClusterName)
	allowNodeIdentities(fn.Role, p.ClusterName, nodes)
	return &Provisioner{Construct: c, Function: fn}
}

// allowProvisionerEC2 lets role launch instances only tagged as the cluster's, from launch templates it
// created for the cluster, tag its own instances with their claims, and mark those templates used; deleting them is the lifecycle's
// (allowHousekeeping).
func allowProvisionerEC2(role awsiam.Role, cluster string) {
	requestOwned, resourceOwned := ownedBy("RequestTag", cluster), ownedBy("ResourceTag", cluster)
	created := []string{}
	for _, t := range []string{"fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request"} {
		created = append(created, ec2Arn(role, t, true))
	}
	launch := []string{"ec2:RunInstances", "ec2:CreateFleet"}

	// What a launch creates carries the cluster's tag and none of the keys Karpenter's garbage collection
	// and clean-up take instances and templates by (instance.NeverSetTagKeys): the code never sets them,
	// and IAM refuses them if it ever did.
	noKarpenterKeys := map[string]interface{}{"aws:TagKeys": instance.NeverSetTagKeys}
	allow(role, "EC2Reads", provisionerEC2Reads, []string{"*"}, nil)
	allow(role, "LaunchTaggedAsOwned", append(launch, "ec2:CreateLaunchTemplate"), created,
		conditions{"StringEquals": requestOwned, "ForAllValues:StringNotEquals": noKarpenterKeys})
	tagOnCreate := ownedBy("RequestTag", cluster)
	tagOnCreate["ec2:CreateAction"] = []string{"RunInstances", "CreateFleet", "CreateLaunchTemplate"}
	allow(role, "TagOnCreateOnly", []string{"ec2:CreateTags"}, created,
		conditions{"StringEquals": tagOnCreate, "ForAllValues:StringNotEquals": noKarpenterKeys})
	allow(role, "LaunchFromOwnedTemplates", launch, []string{ec2Arn(role, "launch-template", true)},
		conditions{"StringEquals": resourceOwned})
	// The node class picks images, subnets and security groups by selector at run time; RunInstances and
	// CreateFleet authorise each of them as a resource of the launch.
	allow(role, "LaunchWithSelectedResources", launch, []string{
		ec2Arn(role, "image", false), ec2Arn(role, "snapshot", false),
		ec2Arn(role, "subnet", true), ec2Arn(role, "security-group", true),
		capacityReservationArn(role),
	}, nil)
	allowStampOwnedTemplates(role, cluster)
	// A batched launch tags its instances alike; each is then tagged with its claim, only with the claim
	// tag and only on the cluster's own instances.
	allow(role, "TagOwnedInstancesWithClaim", []string{"ec2:CreateTags"}, []string{ec2Arn(role, "instance", true)}, conditions{
		"StringEquals":              resourceOwned,
		"ForAllValues:StringEquals": map[string]interface{}{"aws:TagKeys": []string{instance.TagNodeClaim}},
	})

	suppressWildcards(role, "EC2 Describe* calls have no resource-level permissions in IAM; "+
		"the statement lists each read action the provisioner makes instead of ec2:Describe*.", "Resource::*")
	suppressWildcards(role, "The provisioner names the instances, volumes, network interfaces, fleets, spot requests and "+
		"launch templates it creates only at launch time; every statement on them requires the cluster's "+
		"nodewright.sh/cluster=<name> tag in the request (creation) or on the resource (launch from, mark used), a tag "+
		"only Nodewright sets.",
		arnWildcard("ec2", `(fleet|instance|volume|network-interface|launch-template|spot-instances-request)\/\*`, true))
	suppressWildcards(role, "Images, snapshots, subnets, security groups and capacity reservations are chosen by the "+
		"EC2NodeClass selectors at run time (they change without a deploy; reservations may be shared from other "+
		"accounts); RunInstances/CreateFleet only read them.",
		arnWildcard("ec2", `(image|snapshot)\/\*`, false), arnWildcard("ec2", `(subnet|security-group)\/\*`, true),
		`/^Resource::arn:(<AWS::Partition>|aws[a-z-]*):ec2:(<AWS::Region>|[a-z0-9-]+)?:\*:capacity-reservation\/\*$/`)
}

// capacityReservationArn is every capacity reservation of the region, of any account: an EC2NodeClass's
// capacityReservationSelectorTerms may select reservations shared with this account (ownerID).
func capacityReservationArn(scope constructs.Construct) string {
	return *awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{Service: jsii.String("ec2"), Account: jsii.String("*"),
		Resource: jsii.String("capacity-reservation"), ResourceName: jsii.String("*")})
}

// instanceProfilePrefix is the name prefix of the instance profiles Nodewright manages for a cluster
// (see nodeclass.InstanceProfileName).
func instanceProfilePrefix(cluster string) string { return "nodewright_" + cluster + "_" }

// allowNodeIdentities lets role pass the EC2NodeClasses' node roles to EC2, manage the instance profiles
// it creates for them, read the profiles the classes name, read the public AMI parameters and those the
// classes name, and have EC2 use the KMS keys the classes encrypt volumes with (allowNodeVolumeKeys).
func allowNodeIdentities(role awsiam.Role, cluster string, nodes NodeIdentities) {
	stack := awscdk.Stack_Of(role)
	iamArn := func(resource, name string) string {
		return *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("iam"), Region: jsii.String(""),
			Resource: jsii.String(resource), ResourceName: jsii.String(name)})
	}
	if len(nodes.Roles) > 0 {
		roles := make([]string, len(nodes.Roles))
		for i, r := range nodes.Roles {
			roles[i] = iamArn("role", r)
		}
		allow(role, "PassNodeRoles", []string{"iam:PassRole"}, roles,
			conditions{"StringEquals": map[string]interface{}{"iam:PassedToService": "ec2.amazonaws.com"}})
		managed := iamArn("instance-profile", instanceProfilePrefix(cluster)+"*")
		clusterTag := "nodewright.sh/cluster"
		// Get must work before the profile exists (NoSuchEntity, not AccessDenied), so it has no tag condition.
		allow(role, "ReadManagedInstanceProfiles", []string{"iam:GetInstanceProfile"}, []string{managed}, nil)
		allow(role, "CreateManagedInstanceProfiles", []string{"iam:CreateInstanceProfile", "iam:TagInstanceProfile"}, []string{managed},
			conditions{"StringEquals": map[string]interface{}{"aws:RequestTag/" + clusterTag: cluster}})
		allow(role, "FillManagedInstanceProfiles", []string{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile"},
			[]string{managed}, conditions{"StringEquals": map[string]interface{}{"aws:ResourceTag/" + clusterTag: cluster}})
		suppressWildcards(role, "Nodewright creates one instance profile per EC2NodeClass named "+instanceProfilePrefix(cluster)+
			"<hash>; creating and changing them requires the nodewright.sh/cluster tag of this cluster.",
			arnWildcard("iam", `instance-profile\/`+regexp.QuoteMeta(instanceProfilePrefix(cluster))+`\*`, true))
	}
	if len(nodes.InstanceProfiles) > 0 {
		profiles := make([]string, len(nodes.InstanceProfiles))
		for i, name := range nodes.InstanceProfiles {
			profiles[i] = iamArn("instance-profile", name)
		}
		allow(role, "ReadNamedInstanceProfiles", []string{"iam:GetInstanceProfile"}, profiles, nil)
	}
	params := []string{*stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ssm"), Account: jsii.String(""),
		Resource: jsii.String("parameter"), ResourceName: jsii.String("aws/service/*")})}
	for _, name := range nodes.SSMParameters {
		if strings.HasPrefix(name, "/aws/service/") {
			continue
		}
		params = append(params, *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ssm"),
			Resource: jsii.String("parameter"), ResourceName: jsii.String(strings.TrimPrefix(name, "/"))}))
	}
	allow(role, "ReadAMIParameters", []string{"ssm:GetParameter"}, params, nil)
	allowNodeVolumeKeys(role, nodes.VolumeKeys)
	suppressWildcards(role, "AMI aliases resolve through AWS's public parameters under /aws/service/ (EKS, Bottlerocket "+
		"and Amazon Linux AMI ids), which are the same for every account.",
		arnWildcard("ssm", `parameter\/aws\/service\/\*`, false))
}
