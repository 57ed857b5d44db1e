package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Conditions of an IAM statement: operator → key → value(s).
type conditions = map[string]interface{}

// allow adds one Allow statement to role; conds may be nil.
func allow(role awsiam.Role, sid string, actions, resources []string, conds conditions) {
	props := &awsiam.PolicyStatementProps{
		Sid:       jsii.String(sid),
		Actions:   jsii.Strings(actions...),
		Resources: jsii.Strings(resources...),
	}
	if conds != nil {
		props.Conditions = &conds
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(props))
}

// Read and write actions on the state table. There is no IAM action for TransactWriteItems: DynamoDB
// authorises each Put, Update and Delete of a transaction as that action.
var (
	stateRead  = []string{"dynamodb:GetItem", "dynamodb:Query"}
	stateWrite = []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}
	// claimCreate are the actions creating claims and moving them to deleted take besides stateWrite: a
	// create checks that no deleted claim holds the name (ConditionCheckItem), a claim that is deleted
	// leaves its live shard (DeleteItem).
	claimCreate = []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem"}
	// claimView is what a warm state.ClaimsView reads the claim shards' change counters with.
	claimView = []string{"dynamodb:BatchGetItem"}
)

// stateAccess joins lists of state-table actions, each action once.
func stateAccess(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, a := range l {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// allowState lets role use actions on the state table and its two indexes, named one by one.
func allowState(role awsiam.Role, table awsdynamodb.ITable, actions ...string) {
	arn := *table.TableArn()
	allow(role, "StateTable", actions,
		[]string{arn, arn + "/index/" + state.IndexByInstance, arn + "/index/" + state.IndexByLifecycle}, nil)
}

// clusterArn is the ARN of the EKS cluster in the stack's account and region.
func clusterArn(scope constructs.Construct, cluster string) string {
	return *awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("eks"), Resource: jsii.String("cluster"), ResourceName: jsii.String(cluster),
	})
}

// allowDescribeCluster lets role read the cluster's endpoint and CA. Kubernetes API tokens are presigned
// sts:GetCallerIdentity URLs, which need no permission.
func allowDescribeCluster(role awsiam.Role, cluster string) {
	allow(role, "DescribeCluster", []string{"eks:DescribeCluster"}, []string{clusterArn(role, cluster)}, nil)
}

// ec2Arn is the ARN pattern of an EC2 resource type in the stack's region: in its account, or with an
// empty account for public resources (images, snapshots).
func ec2Arn(scope constructs.Construct, resourceType string, ownAccount bool) string {
	c := &awscdk.ArnComponents{Service: jsii.String("ec2"), Resource: jsii.String(resourceType), ResourceName: jsii.String("*")}
	if !ownAccount {
		c.Account = jsii.String("")
	}
	return *awscdk.Stack_Of(scope).FormatArn(c)
}

// ownedBy is the condition value map that ties a request (aws:RequestTag) or a resource (aws:ResourceTag)
// to the cluster: Nodewright's own tag nodewright.sh/cluster=<cluster>. The kubernetes.io/cluster/<name>
// tag would not do: Karpenter's and managed node groups' instances carry it too.
func ownedBy(kind, cluster string) map[string]interface{} {
	return map[string]interface{}{"aws:" + kind + "/" + instance.TagCluster: cluster}
}

// allowTerminateOwned lets role terminate only the cluster's instances (tagged nodewright.sh/cluster).
func allowTerminateOwned(role awsiam.Role, cluster string) {
	allow(role, "TerminateOwnedInstances", []string{"ec2:TerminateInstances"}, []string{ec2Arn(role, "instance", true)},
		conditions{"StringEquals": ownedBy("ResourceTag", cluster)})
}

// terminateSuppression is why a role that terminates instances names them by a wildcard ARN.
const terminateSuppression = "Instances are known only at run time; TerminateInstances requires the cluster's " +
	"nodewright.sh/cluster=<name> tag on the instance, which only Nodewright's instances carry."

// suppressWildcards records, on role and its policy, why each listed wildcard (cdk-nag's appliesTo
// form, a plain string or a /regex/) is needed.
func suppressWildcards(role constructs.IConstruct, reason string, appliesTo ...string) {
	applies := make([]interface{}, len(appliesTo))
	for i, a := range appliesTo {
		if len(a) > 1 && a[0] == '/' {
			applies[i] = &cdknag.RegexAppliesTo{Regex: jsii.String(a)}
		} else {
			applies[i] = a
		}
	}
	cdknag.NagSuppressions_AddResourceSuppressions(role, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"), Reason: jsii.String(reason), AppliesTo: &applies,
	}}, jsii.Bool(true))
}

// arnWildcard matches cdk-nag's rendering of a FormatArn pattern of service whose resource part matches
// the regex resource, whether the stack is environment-agnostic or has a fixed account and region; as
// an appliesTo regex it exempts exactly those ARNs.
func arnWildcard(service, resource string, inAccount bool) string {
	acct := ""
	if inAccount {
		acct = `(<AWS::AccountId>|[0-9]{12})`
	}
	return `/^Resource::arn:(<AWS::Partition>|aws[a-z-]*):` + service + `:(<AWS::Region>|[a-z0-9-]+)?:` + acct + `:` + resource + `$/`
}
