package awscalls

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

const table = "arn:aws:dynamodb:us-east-1:123456789012:table/state"

func tagged(cluster string) map[string]map[string][]string {
	return map[string]map[string][]string{"StringEquals": {"aws:ResourceTag/nodewright.sh/cluster": {cluster}}}
}

func TestEvaluate(t *testing.T) {
	secret := "arn:aws:secretsmanager:us-east-1:123456789012:secret:nodewright-webhook-token"
	policy := []Statement{
		{Sid: "State", Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}, Resources: []string{table, table + "/index/*"}},
		{Sid: "Reads", Effect: "Allow", Actions: []string{"ec2:Describe*"}, Resources: []string{"*"}},
		{Sid: "Terminate", Effect: "Allow", Actions: []string{"ec2:TerminateInstances"},
			Resources: []string{"arn:aws:ec2:us-east-1:123456789012:instance/*"}, Conditions: tagged("prod")},
		{Sid: "Mark", Effect: "Allow", Actions: []string{"ec2:CreateTags"}, Resources: []string{"arn:aws:ec2:us-east-1:123456789012:launch-template/*"},
			Conditions: map[string]map[string][]string{"ForAllValues:StringEquals": {"aws:TagKeys": {"last-used"}}}},
		{Sid: "NoDeleteOfProd", Effect: "Deny", Actions: []string{"dynamodb:DeleteItem"}, Resources: []string{"*"}},
		{Sid: "Token", Effect: "Allow", Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []string{secret + "-*"},
			Conditions: map[string]map[string][]string{"StringEquals": {"secretsmanager:VersionStage": {"AWSCURRENT", "AWSPREVIOUS"}}}},
	}
	instance := "arn:aws:ec2:us-east-1:123456789012:instance/i-1"
	cases := []struct {
		name    string
		check   Check
		allowed bool
		by      string
		reason  string
	}{
		{name: "allowed by table ARN", check: Check{Action: "dynamodb:PutItem", Resource: table}, allowed: true, by: "State"},
		{name: "allowed on an index by wildcard", check: Check{Action: "dynamodb:GetItem", Resource: table + "/index/byInstance"}, allowed: true, by: "State"},
		{name: "action wildcard, case-insensitive", check: Check{Action: "EC2:DescribeInstances", Resource: "*"}, allowed: true, by: "Reads"},
		{name: "denied action", check: Check{Action: "dynamodb:BatchWriteItem", Resource: table}, reason: "no statement grants dynamodb:BatchWriteItem"},
		{name: "denied resource", check: Check{Action: "dynamodb:PutItem", Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/other"},
			reason: "State grants it only on " + table},
		{name: "tag condition holds", check: Check{Action: "ec2:TerminateInstances", Resource: instance,
			Context: map[string][]string{"aws:ResourceTag/nodewright.sh/cluster": {"prod"}}}, allowed: true, by: "Terminate"},
		{name: "tag condition fails on another cluster's instance", check: Check{Action: "ec2:TerminateInstances", Resource: instance,
			Context: map[string][]string{"aws:ResourceTag/nodewright.sh/cluster": {"dev"}}}, reason: "Terminate: condition StringEquals"},
		{name: "tag condition fails on an untagged instance", check: Check{Action: "ec2:TerminateInstances", Resource: instance},
			reason: "does not hold (request: [])"},
		{name: "ForAllValues holds for the allowed keys only",
			check: Check{Action: "ec2:CreateTags", Resource: "arn:aws:ec2:us-east-1:123456789012:launch-template/lt-1",
				Context: map[string][]string{"aws:TagKeys": {"last-used"}}}, allowed: true, by: "Mark"},
		{name: "ForAllValues fails with another key",
			check: Check{Action: "ec2:CreateTags", Resource: "arn:aws:ec2:us-east-1:123456789012:launch-template/lt-1",
				Context: map[string][]string{"aws:TagKeys": {"last-used", "nodewright.sh/cluster"}}}, reason: "ForAllValues:StringEquals aws:TagKeys"},
		{name: "the token's current version", check: Check{Action: "secretsmanager:GetSecretValue", Resource: secret + "-AbCdEf",
			Context: map[string][]string{"secretsmanager:VersionStage": {"AWSCURRENT"}}}, allowed: true, by: "Token"},
		{name: "a version stage the role does not allow", check: Check{Action: "secretsmanager:GetSecretValue", Resource: secret + "-AbCdEf",
			Context: map[string][]string{"secretsmanager:VersionStage": {"AWSPENDING"}}}, reason: "Token: condition StringEquals"},
		{name: "no version stage named", check: Check{Action: "secretsmanager:GetSecretValue", Resource: secret + "-AbCdEf"},
			reason: "Token: condition StringEquals"},
		{name: "explicit deny wins", check: Check{Action: "dynamodb:DeleteItem", Resource: table}, reason: "explicitly denied by NoDeleteOfProd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Evaluate(policy, tc.check)
			assert.Equal(t, tc.allowed, d.Allowed, d.Reason)
			if tc.allowed {
				assert.Equal(t, tc.by, d.By)
			} else {
				assert.Contains(t, d.Reason, tc.reason)
			}
		})
	}
}

// TestEvaluateFailsClosed: what the evaluator cannot judge denies, even where IAM might allow.
func TestEvaluateFailsClosed(t *testing.T) {
	check := Check{Action: "ec2:TerminateInstances", Resource: "arn:aws:ec2:us-east-1:123456789012:instance/i-1",
		Context: map[string][]string{"aws:ResourceTag/nodewright.sh/cluster": {"prod"}}}
	cases := map[string]struct {
		conds  map[string]map[string][]string
		effect string
		reason string
	}{
		"unsupported operator": {conds: map[string]map[string][]string{"DateGreaterThan": {"aws:ResourceTag/nodewright.sh/cluster": {"x"}}},
			reason: "condition operator DateGreaterThan is not supported"},
		"unsupported key, even under a negated operator": {conds: map[string]map[string][]string{"StringNotEquals": {"aws:SourceVpc": {"vpc-1"}}},
			reason: "condition key aws:SourceVpc is not one the recordings carry"},
		"malformed Null": {conds: map[string]map[string][]string{"Null": {"aws:ResourceTag/nodewright.sh/cluster": {"maybe"}}},
			reason: "Null needs true or false"},
		"unknown effect": {effect: "Permit", reason: `effect "Permit"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			effect := tc.effect
			if effect == "" {
				effect = "Allow"
			}
			d := Evaluate([]Statement{{Sid: "S", Effect: effect, Actions: []string{"ec2:*"}, Resources: []string{"*"}, Conditions: tc.conds}}, check)
			assert.False(t, d.Allowed)
			assert.Contains(t, d.Reason, tc.reason)
		})
	}
}

func TestConditionOperators(t *testing.T) {
	cases := []struct {
		op        string
		want, got []string
		present   bool
		holds     bool
	}{
		{"StringEquals", []string{"a"}, []string{"a"}, true, true},
		{"StringEquals", []string{"a"}, nil, false, false},
		{"StringNotEquals", []string{"a"}, nil, false, true},
		{"StringEqualsIfExists", []string{"a"}, nil, false, true},
		{"StringLike", []string{"nodewright_*"}, []string{"nodewright_prod_1"}, true, true},
		{"StringNotLike", []string{"nodewright_*"}, []string{"other"}, true, true},
		{"ForAnyValue:StringEquals", []string{"a"}, []string{"b", "a"}, true, true},
		{"ForAnyValue:StringEquals", []string{"a"}, nil, false, false},
		{"ForAllValues:StringEquals", []string{"a"}, nil, false, true},
		{"Null", []string{"true"}, nil, false, true},
		{"Null", []string{"false"}, nil, false, false},
	}
	for _, tc := range cases {
		got, err := holds(tc.op, tc.want, tc.got, tc.present)
		assert.NoError(t, err, tc.op)
		assert.Equal(t, tc.holds, got, "%s %v on %v (present %v)", tc.op, tc.want, tc.got, tc.present)
	}
}

func TestGlob(t *testing.T) {
	assert.True(t, glob("arn:aws:ec2:*:*:instance/*", "arn:aws:ec2:us-east-1:1:instance/i-1"))
	assert.True(t, glob("a?c", "abc"))
	assert.False(t, glob("arn:aws:ec2:us-east-1:1:instance/*", "arn:aws:ec2:us-east-1:1:volume/v-1"))
	assert.False(t, glob("abc", "abcd"))
	assert.True(t, glob("*", ""))
}
