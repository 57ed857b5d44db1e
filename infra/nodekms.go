package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// kmsVolumeActions are what EC2 does with a customer managed key on behalf of the principal that launches
// an instance with volumes encrypted by it (EC2NodeClass blockDeviceMappings[].ebs.kmsKeyID): it describes
// the key, makes the volume's data key, and creates the grant the volume is attached and used with. Without
// them the launch succeeds and the instance terminates at once (Client.InvalidKMSKey.InvalidState or
// Client.InternalError).
var kmsVolumeActions = []string{"kms:DescribeKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:Decrypt",
	"kms:ReEncryptFrom", "kms:ReEncryptTo"}

// allowNodeVolumeKeys lets role use the KMS keys the EC2NodeClasses encrypt volumes with, only through
// EC2 in the stack's region (kms:ViaService), and create grants only for AWS resources. The statements
// go in a policy of their own (NodeVolumeKeys, attached to role), so they and their cdk-nag suppression
// stay together however large the role's default policy grows (CDK moves what overflows it into new
// policies, which a suppression made before synthesis does not reach). keys are the
// classes' kmsKeyID values: a key id, a key ARN, an alias name (alias/x) or an alias ARN. A key named by
// alias is allowed among the account's keys by the alias it carries (kms:ResourceAliases), since a
// policy cannot name a key by its alias.
func allowNodeVolumeKeys(role awsiam.Role, keys []string) {
	if len(keys) == 0 {
		return
	}
	stack := awscdk.Stack_Of(role)
	policy := awsiam.NewPolicy(role, jsii.String("NodeVolumeKeys"), &awsiam.PolicyProps{Roles: &[]awsiam.IRole{role}})
	allow := func(sid string, actions, resources []string, conds conditions) {
		policy.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Sid: jsii.String(sid),
			Actions: jsii.Strings(actions...), Resources: jsii.Strings(resources...), Conditions: &conds}))
	}
	keyArn := func(account, id string) string {
		c := &awscdk.ArnComponents{Service: jsii.String("kms"), Resource: jsii.String("key"), ResourceName: jsii.String(id)}
		if account != "" {
			c.Account = jsii.String(account)
		}
		return *stack.FormatArn(c)
	}
	viaEC2 := "ec2." + *stack.Region() + "." + *stack.UrlSuffix()
	var byID []string
	aliasesByAccount := map[string][]string{}
	var accounts []string
	for _, k := range keys {
		account, alias, isAlias := aliasOf(k)
		switch {
		case isAlias:
			if _, seen := aliasesByAccount[account]; !seen {
				accounts = append(accounts, account)
			}
			aliasesByAccount[account] = append(aliasesByAccount[account], alias)
		case strings.HasPrefix(k, "arn:"):
			byID = append(byID, k)
		default:
			byID = append(byID, keyArn("", k))
		}
	}
	if len(byID) > 0 {
		allow("NodeVolumeKeys", kmsVolumeActions, byID,
			conditions{"StringEquals": map[string]interface{}{"kms:ViaService": viaEC2}})
		allow("NodeVolumeKeyGrants", []string{"kms:CreateGrant"}, byID, conditions{
			"StringEquals": map[string]interface{}{"kms:ViaService": viaEC2},
			"Bool":         map[string]interface{}{"kms:GrantIsForAWSResource": "true"},
		})
	}
	for i, account := range accounts {
		keys := []string{keyArn(account, "*")}
		aliases := map[string]interface{}{"kms:ResourceAliases": aliasesByAccount[account]}
		sid := fmt.Sprintf("NodeVolumeKeysByAlias%d", i)
		allow(sid, kmsVolumeActions, keys, conditions{
			"StringEquals":             map[string]interface{}{"kms:ViaService": viaEC2},
			"ForAnyValue:StringEquals": aliases,
		})
		allow(sid+"Grants", []string{"kms:CreateGrant"}, keys, conditions{
			"StringEquals":             map[string]interface{}{"kms:ViaService": viaEC2},
			"ForAnyValue:StringEquals": aliases,
			"Bool":                     map[string]interface{}{"kms:GrantIsForAWSResource": "true"},
		})
	}
	if len(accounts) > 0 {
		suppressWildcards(policy, "A kmsKeyID given as an alias names no key; the statement allows the account's keys "+
			"only when they carry that alias (kms:ResourceAliases) and only through EC2 in this region (kms:ViaService).",
			`/^Resource::arn:(<AWS::Partition>|aws[a-z-]*):kms:(<AWS::Region>|[a-z0-9-]+)?:(<AWS::AccountId>|[0-9]{12}):key\/\*$/`)
	}
}

// aliasOf reads a kmsKeyID that names an alias: "alias/x" (account "", the stack's) or an alias ARN
// "arn:<partition>:kms:<region>:<account>:alias/x".
func aliasOf(k string) (account, alias string, ok bool) {
	if strings.HasPrefix(k, "alias/") {
		return "", k, true
	}
	parts := strings.SplitN(k, ":", 6)
	if len(parts) == 6 && parts[0] == "arn" && parts[2] == "kms" && strings.HasPrefix(parts[5], "alias/") {
		return parts[4], parts[5], true
	}
	return "", "", false
}
