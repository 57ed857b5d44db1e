package awscalls

import (
	"context"
	"net/url"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// authorizer works out the checks of a call from its input, reading the tags of existing resources.
type authorizer struct {
	account string
	tags    *tagReader
}

func newAuthorizer(cfg aws.Config, account string) *authorizer {
	return &authorizer{account: account, tags: newTagReader(cfg)}
}

// servicePrefixes maps SDK service ids to IAM service prefixes where they differ from the lower-cased id.
var servicePrefixes = map[string]string{"EventBridge": "events", "CloudWatch Logs": "logs"}

func prefixOf(service string) string {
	if p, ok := servicePrefixes[service]; ok {
		return p
	}
	return strings.ToLower(strings.ReplaceAll(service, " ", ""))
}

// request is one call being authorised.
type request struct {
	*authorizer
	ctx     context.Context
	region  string
	prefix  string
	op      string
	checks  []Check
	lookups []string // look-ups that failed
}

func (r *request) arn(service, region, account, resource string) string {
	return "arn:aws:" + service + ":" + region + ":" + account + ":" + resource
}

func (r *request) add(action, resource string, ctx map[string][]string) {
	r.checks = append(r.checks, Check{Action: action, Resource: resource, Context: ctx})
}

// checks returns what IAM authorises for the operation op of service with input params. An error means
// a check could not be worked out (a tag look-up failed); the checks found are still returned.
func (a *authorizer) checks(ctx context.Context, region, service, op string, params interface{}) ([]Check, error) {
	r := &request{authorizer: a, ctx: ctx, region: region, prefix: prefixOf(service), op: op}
	handled := false
	switch in := params.(type) {
	case nil:
	default:
		handled = r.dynamodb(in) || r.sqs(in) || r.ec2(in) || r.iam(in) || r.other(in)
	}
	if !handled {
		// Actions without resource-level permissions (Describe*, List*, pricing) are authorised on "*".
		r.add(r.prefix+":"+op, "*", nil)
	}
	if len(r.lookups) > 0 {
		return r.checks, &lookupError{r.lookups}
	}
	return r.checks, nil
}

type lookupError struct{ failed []string }

func (e *lookupError) Error() string { return "tag look-ups failed: " + strings.Join(e.failed, "; ") }

func (r *request) table(name string, index *string) string {
	res := "table/" + name
	if index != nil {
		res += "/index/" + *index
	}
	return r.arn("dynamodb", r.region, r.account, res)
}

func (r *request) dynamodb(params interface{}) bool {
	one := func(action, table string, index *string) { r.add("dynamodb:"+action, r.table(table, index), nil) }
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		one("GetItem", aws.ToString(in.TableName), nil)
	case *dynamodb.PutItemInput:
		one("PutItem", aws.ToString(in.TableName), nil)
	case *dynamodb.UpdateItemInput:
		one("UpdateItem", aws.ToString(in.TableName), nil)
	case *dynamodb.DeleteItemInput:
		one("DeleteItem", aws.ToString(in.TableName), nil)
	case *dynamodb.QueryInput:
		one("Query", aws.ToString(in.TableName), in.IndexName)
	case *dynamodb.ScanInput:
		one("Scan", aws.ToString(in.TableName), in.IndexName)
	case *dynamodb.DescribeTableInput:
		one("DescribeTable", aws.ToString(in.TableName), nil)
	case *dynamodb.CreateTableInput:
		one("CreateTable", aws.ToString(in.TableName), nil)
	case *dynamodb.BatchWriteItemInput:
		// BatchWriteItem is its own action, authorised once per table.
		for _, t := range sortedKeys(in.RequestItems) {
			one("BatchWriteItem", t, nil)
		}
	case *dynamodb.BatchGetItemInput:
		for _, t := range sortedKeys(in.RequestItems) {
			one("BatchGetItem", t, nil)
		}
	case *dynamodb.TransactWriteItemsInput:
		// There is no TransactWriteItems action: IAM authorises each item as its own write.
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				one("PutItem", aws.ToString(it.Put.TableName), nil)
			case it.Update != nil:
				one("UpdateItem", aws.ToString(it.Update.TableName), nil)
			case it.Delete != nil:
				one("DeleteItem", aws.ToString(it.Delete.TableName), nil)
			case it.ConditionCheck != nil:
				one("ConditionCheckItem", aws.ToString(it.ConditionCheck.TableName), nil)
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			if it.Get != nil {
				one("GetItem", aws.ToString(it.Get.TableName), nil)
			}
		}
	default:
		return false
	}
	return true
}

// queueArn turns a queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>, or moto's
// http://host/<account>/<name>) into the queue's ARN.
func (r *request) queueArn(queueURL *string) string {
	u, err := url.Parse(aws.ToString(queueURL))
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if err != nil || len(parts) != 2 {
		r.lookups = append(r.lookups, "queue URL "+aws.ToString(queueURL)+" names no account and queue")
		return aws.ToString(queueURL)
	}
	return r.arn("sqs", r.region, parts[0], parts[1])
}

func (r *request) sqs(params interface{}) bool {
	var action string
	var queue *string
	switch in := params.(type) {
	case *sqs.SendMessageInput:
		action, queue = "SendMessage", in.QueueUrl
	case *sqs.SendMessageBatchInput: // authorised as SendMessage
		action, queue = "SendMessage", in.QueueUrl
	case *sqs.ReceiveMessageInput:
		action, queue = "ReceiveMessage", in.QueueUrl
	case *sqs.DeleteMessageInput:
		action, queue = "DeleteMessage", in.QueueUrl
	case *sqs.DeleteMessageBatchInput: // authorised as DeleteMessage
		action, queue = "DeleteMessage", in.QueueUrl
	case *sqs.ChangeMessageVisibilityInput:
		action, queue = "ChangeMessageVisibility", in.QueueUrl
	case *sqs.ChangeMessageVisibilityBatchInput:
		action, queue = "ChangeMessageVisibility", in.QueueUrl
	case *sqs.GetQueueAttributesInput:
		action, queue = "GetQueueAttributes", in.QueueUrl
	case *sqs.GetQueueUrlInput:
		r.add("sqs:GetQueueUrl", r.arn("sqs", r.region, r.account, aws.ToString(in.QueueName)), nil)
		return true
	default:
		return false
	}
	r.add("sqs:"+action, r.queueArn(queue), nil)
	return true
}

func (r *request) iam(params interface{}) bool {
	profile := func(name *string) string { return r.arn("iam", "", r.account, "instance-profile/"+aws.ToString(name)) }
	switch in := params.(type) {
	case *iam.GetInstanceProfileInput:
		r.add("iam:GetInstanceProfile", profile(in.InstanceProfileName), nil)
	case *iam.CreateInstanceProfileInput:
		ctx := map[string][]string{}
		var keys []string
		for _, t := range in.Tags {
			ctx["aws:RequestTag/"+aws.ToString(t.Key)] = []string{aws.ToString(t.Value)}
			keys = append(keys, aws.ToString(t.Key))
		}
		if len(keys) > 0 {
			ctx["aws:TagKeys"] = keys
		}
		r.add("iam:CreateInstanceProfile", profile(in.InstanceProfileName), ctx)
		if len(keys) > 0 { // tags in a create request are also authorised as tagging
			r.add("iam:TagInstanceProfile", profile(in.InstanceProfileName), ctx)
		}
	case *iam.AddRoleToInstanceProfileInput:
		r.add("iam:AddRoleToInstanceProfile", profile(in.InstanceProfileName), r.profileTags(aws.ToString(in.InstanceProfileName)))
		// Adding a role to a profile passes the role (to EC2, which the profile serves).
		r.add("iam:PassRole", r.arn("iam", "", r.account, "role/"+aws.ToString(in.RoleName)),
			map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}})
	case *iam.RemoveRoleFromInstanceProfileInput:
		r.add("iam:RemoveRoleFromInstanceProfile", profile(in.InstanceProfileName), r.profileTags(aws.ToString(in.InstanceProfileName)))
	case *iam.ListInstanceProfilesInput:
		// IAM authorises a list by the path it covers.
		path := "/"
		if in.PathPrefix != nil {
			path = *in.PathPrefix
		}
		r.add("iam:ListInstanceProfiles", r.arn("iam", "", r.account, "instance-profile"+path), nil)
	case *iam.DeleteInstanceProfileInput:
		r.add("iam:DeleteInstanceProfile", profile(in.InstanceProfileName), r.profileTags(aws.ToString(in.InstanceProfileName)))
	default:
		return false
	}
	return true
}

func (r *request) other(params interface{}) bool {
	switch in := params.(type) {
	case *ssm.GetParameterInput:
		name := strings.TrimPrefix(aws.ToString(in.Name), "/")
		account := r.account
		if strings.HasPrefix(name, "aws/service/") { // public parameters belong to no account
			account = ""
		}
		r.add("ssm:GetParameter", r.arn("ssm", r.region, account, "parameter/"+name), nil)
	case *eks.DescribeClusterInput:
		r.add("eks:DescribeCluster", r.arn("eks", r.region, r.account, "cluster/"+aws.ToString(in.Name)), nil)
	case *secretsmanager.GetSecretValueInput:
		id := aws.ToString(in.SecretId)
		if !strings.HasPrefix(id, "arn:") {
			id = r.arn("secretsmanager", r.region, r.account, "secret:"+id)
		}
		var ctx map[string][]string
		if in.VersionStage != nil {
			ctx = map[string][]string{"secretsmanager:VersionStage": {aws.ToString(in.VersionStage)}}
		}
		r.add("secretsmanager:GetSecretValue", id, ctx)
	default:
		return false
	}
	return true
}

// tagContext turns tags into condition keys under prefix (aws:RequestTag or aws:ResourceTag).
func tagContext(ctx map[string][]string, prefix string, tags map[string]string) map[string][]string {
	if ctx == nil {
		ctx = map[string][]string{}
	}
	for k, v := range tags {
		ctx[prefix+"/"+k] = []string{v}
	}
	return ctx
}

func ec2Tags(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
