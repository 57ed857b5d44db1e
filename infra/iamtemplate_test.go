package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// cfnEnv binds a synthesized template to the resources a recording touched: pseudo parameters, and the
// logical ids of the resources the template creates (state table, queues) to their physical names and
// ARNs as the recorded run created them.
type cfnEnv struct {
	Region, Account string
	// Refs maps a logical id to what Ref returns; Arns to what Fn::GetAtt [id, Arn] returns.
	Refs, Arns map[string]string
}

// resolve turns a CloudFormation value (string, intrinsic, list) into a string. A logical id the
// environment does not bind resolves to a marker that no ARN matches, so a grant on an unbound resource
// never allows a recorded call; an intrinsic function it does not know is an error.
func (e cfnEnv) resolve(v interface{}) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return fmt.Sprint(v), nil
	case map[string]interface{}:
		if len(v) != 1 {
			return "", fmt.Errorf("not an intrinsic function: %v", v)
		}
		for fn, arg := range v {
			return e.intrinsic(fn, arg)
		}
	}
	return "", fmt.Errorf("cannot resolve %T %v", v, v)
}

func (e cfnEnv) ref(name string) string {
	switch name {
	case "AWS::Partition":
		return "aws"
	case "AWS::Region":
		return e.Region
	case "AWS::AccountId":
		return e.Account
	case "AWS::URLSuffix":
		return "amazonaws.com"
	}
	if r, ok := e.Refs[name]; ok {
		return r
	}
	return "<unbound Ref " + name + ">"
}

func (e cfnEnv) intrinsic(fn string, arg interface{}) (string, error) {
	switch fn {
	case "Ref":
		name, ok := arg.(string)
		if !ok {
			return "", fmt.Errorf("Ref of %v", arg)
		}
		return e.ref(name), nil
	case "Fn::GetAtt":
		parts := strs(arg)
		if len(parts) != 2 {
			return "", fmt.Errorf("Fn::GetAtt of %v", arg)
		}
		if parts[1] == "Arn" {
			if a, ok := e.Arns[parts[0]]; ok {
				return a, nil
			}
		}
		return "<unbound GetAtt " + parts[0] + "." + parts[1] + ">", nil
	case "Fn::Join":
		args, ok := arg.([]interface{})
		if !ok || len(args) != 2 {
			return "", fmt.Errorf("Fn::Join of %v", arg)
		}
		sep, _ := args[0].(string)
		items, err := e.list(args[1])
		if err != nil {
			return "", err
		}
		return strings.Join(items, sep), nil
	case "Fn::Select":
		args, ok := arg.([]interface{})
		if !ok || len(args) != 2 {
			return "", fmt.Errorf("Fn::Select of %v", arg)
		}
		idx, _ := args[0].(float64)
		items, err := e.list(args[1])
		if err != nil {
			return "", err
		}
		if int(idx) < 0 || int(idx) >= len(items) {
			return "", fmt.Errorf("Fn::Select index %v out of %d", args[0], len(items))
		}
		return items[int(idx)], nil
	case "Fn::Sub":
		tmpl, ok := arg.(string)
		if !ok {
			return "", fmt.Errorf("Fn::Sub with variables is not supported: %v", arg)
		}
		return subVar.ReplaceAllStringFunc(tmpl, func(m string) string {
			name := m[2 : len(m)-1]
			if id, attr, ok := strings.Cut(name, "."); ok {
				s, _ := e.intrinsic("Fn::GetAtt", []interface{}{id, attr})
				return s
			}
			return e.ref(name)
		}), nil
	}
	return "", fmt.Errorf("intrinsic function %s is not supported by the IAM proof", fn)
}

var subVar = regexp.MustCompile(`\$\{[^}!]+\}`)

// list resolves a list value, or an Fn::Split.
func (e cfnEnv) list(v interface{}) ([]string, error) {
	if m, ok := v.(map[string]interface{}); ok {
		if split, ok := m["Fn::Split"].([]interface{}); ok && len(split) == 2 {
			sep, _ := split[0].(string)
			s, err := e.resolve(split[1])
			if err != nil {
				return nil, err
			}
			return strings.Split(s, sep), nil
		}
	}
	items, ok := v.([]interface{})
	if !ok {
		items = []interface{}{v}
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, err := e.resolve(it)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// policyStatements converts a role's policy statements from the template, resolved in env.
func policyStatements(raw []map[string]interface{}, env cfnEnv) ([]awscalls.Statement, error) {
	var out []awscalls.Statement
	for i, s := range raw {
		for _, unsupported := range []string{"NotAction", "NotResource", "NotPrincipal"} {
			if _, ok := s[unsupported]; ok {
				return nil, fmt.Errorf("statement %d uses %s, which the IAM proof does not evaluate", i, unsupported)
			}
		}
		st := awscalls.Statement{Effect: fmt.Sprint(s["Effect"]), Actions: strs(s["Action"])}
		st.Sid, _ = s["Sid"].(string)
		res, err := env.list(s["Resource"])
		if err != nil {
			return nil, fmt.Errorf("statement %d resources: %w", i, err)
		}
		st.Resources = res
		if c, ok := s["Condition"].(map[string]interface{}); ok {
			st.Conditions = map[string]map[string][]string{}
			for op, keys := range c {
				km, ok := keys.(map[string]interface{})
				if !ok {
					return nil, fmt.Errorf("statement %d condition %s: %v", i, op, keys)
				}
				st.Conditions[op] = map[string][]string{}
				for k, v := range km {
					vals, err := env.list(v)
					if err != nil {
						return nil, fmt.Errorf("statement %d condition %s %s: %w", i, op, k, err)
					}
					st.Conditions[op][k] = vals
				}
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// TestCfnEnvResolvesWhatRolePoliciesUse: the intrinsics CDK renders ARNs with resolve against the bound
// resources; an unknown intrinsic is an error and an unbound resource matches nothing.
func TestCfnEnvResolvesWhatRolePoliciesUse(t *testing.T) {
	env := cfnEnv{Region: "us-east-1", Account: "123456789012", Refs: map[string]string{"StateTable1": "state"},
		Arns: map[string]string{"StateTable1": "arn:aws:dynamodb:us-east-1:123456789012:table/state"}}
	cases := map[string]struct {
		in   string
		want string
	}{
		"GetAtt Arn":    {`{"Fn::GetAtt":["StateTable1","Arn"]}`, "arn:aws:dynamodb:us-east-1:123456789012:table/state"},
		"Join of parts": {`{"Fn::Join":["",[{"Fn::GetAtt":["StateTable1","Arn"]},"/index/byInstance"]]}`, "arn:aws:dynamodb:us-east-1:123456789012:table/state/index/byInstance"},
		"pseudo parameters": {`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":ec2:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":instance/*"]]}`,
			"arn:aws:ec2:us-east-1:123456789012:instance/*"},
		"Sub":             {`{"Fn::Sub":"arn:${AWS::Partition}:eks:${AWS::Region}:${AWS::AccountId}:cluster/${StateTable1}"}`, "arn:aws:eks:us-east-1:123456789012:cluster/state"},
		"Select of Split": {`{"Fn::Select":[1,{"Fn::Split":["/",{"Fn::GetAtt":["StateTable1","Arn"]}]}]}`, "state"},
		"unbound":         {`{"Fn::GetAtt":["QueuesTermination1","Arn"]}`, "<unbound GetAtt QueuesTermination1.Arn>"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var v interface{}
			require.NoError(t, json.Unmarshal([]byte(tc.in), &v))
			got, err := env.resolve(v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := env.resolve(map[string]interface{}{"Fn::ImportValue": "x"})
	assert.ErrorContains(t, err, "intrinsic function Fn::ImportValue is not supported")

	stmts, err := policyStatements([]map[string]interface{}{{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}}, env)
	assert.Nil(t, stmts)
	assert.ErrorContains(t, err, "uses NotAction")
}
