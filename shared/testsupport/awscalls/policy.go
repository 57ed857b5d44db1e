package awscalls

import (
	"fmt"
	"sort"
	"strings"
)

// Statement is one statement of an IAM identity policy with its resources already resolved to ARN
// patterns. Conditions maps an operator to condition keys and their values.
type Statement struct {
	Sid        string
	Effect     string // Allow or Deny
	Actions    []string
	Resources  []string
	Conditions map[string]map[string][]string
}

// Decision is the outcome of evaluating a check against a policy.
type Decision struct {
	Allowed bool
	// By is the Sid (or index) of the statement that allowed or explicitly denied the check.
	By string
	// Reason says why a check was denied.
	Reason string
}

// supportedKeys are the condition keys the recordings carry; a condition on any other key cannot be
// evaluated and denies (fails closed) instead of passing unseen.
var supportedKeys = []string{"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys", "ec2:CreateAction", "iam:PassedToService",
	"secretsmanager:VersionStage"}

func supportedKey(k string) bool {
	for _, s := range supportedKeys {
		if k == s || (strings.HasSuffix(s, "/") && strings.HasPrefix(k, s) && len(k) > len(s)) {
			return true
		}
	}
	return false
}

// Evaluate decides a check as IAM does for one identity policy: an explicit Deny wins, otherwise a
// matching Allow allows, otherwise the check is implicitly denied. NotAction, NotResource, unknown
// condition operators and keys the recordings do not carry deny, with the reason.
func Evaluate(stmts []Statement, c Check) Decision {
	var allowedBy string
	var near []string // why statements granting the action did not apply
	for i, s := range stmts {
		name := s.Sid
		if name == "" {
			name = fmt.Sprintf("statement %d", i)
		}
		if !anyMatch(s.Actions, c.Action, true) {
			continue
		}
		if !anyMatch(s.Resources, c.Resource, false) {
			near = append(near, fmt.Sprintf("%s grants it only on %s", name, strings.Join(s.Resources, ", ")))
			continue
		}
		ok, why, err := conditionsHold(s.Conditions, c.Context)
		if err != nil {
			return Decision{Reason: fmt.Sprintf("%s: %v (fails closed)", name, err)}
		}
		if !ok {
			near = append(near, fmt.Sprintf("%s: condition %s", name, why))
			continue
		}
		switch s.Effect {
		case "Deny":
			return Decision{By: name, Reason: "explicitly denied by " + name}
		case "Allow":
			if allowedBy == "" {
				allowedBy = name
			}
		default:
			return Decision{Reason: fmt.Sprintf("%s has effect %q (fails closed)", name, s.Effect)}
		}
	}
	if allowedBy != "" {
		return Decision{Allowed: true, By: allowedBy}
	}
	if len(near) == 0 {
		return Decision{Reason: "no statement grants " + c.Action}
	}
	return Decision{Reason: strings.Join(near, "; ")}
}

// anyMatch is whether value matches one of the IAM patterns (* and ?); actions compare case-insensitively.
func anyMatch(patterns []string, value string, fold bool) bool {
	for _, p := range patterns {
		if fold {
			if glob(strings.ToLower(p), strings.ToLower(value)) {
				return true
			}
		} else if glob(p, value) {
			return true
		}
	}
	return false
}

// glob matches IAM wildcards: * any run of characters, ? any one character.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	star, mark := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && (pattern[px] == '?' || pattern[px] == s[sx]):
			px++
			sx++
		case px < len(pattern) && pattern[px] == '*':
			star, mark = px, sx
			px++
		case star >= 0:
			px = star + 1
			mark++
			sx = mark
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// conditionsHold evaluates every operator block (all must hold); why names the first that does not.
func conditionsHold(conds map[string]map[string][]string, ctx map[string][]string) (bool, string, error) {
	ops := make([]string, 0, len(conds))
	for op := range conds {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		for _, key := range sortedKeys(conds[op]) {
			if !supportedKey(key) {
				return false, "", fmt.Errorf("condition key %s is not one the recordings carry", key)
			}
			want := conds[op][key]
			got, present := ctx[key]
			ok, err := holds(op, want, got, present)
			if err != nil {
				return false, "", err
			}
			if !ok {
				return false, fmt.Sprintf("%s %s=%v does not hold (request: %v)", op, key, want, got), nil
			}
		}
	}
	return true, "", nil
}

// holds evaluates one operator on one key.
func holds(op string, want, got []string, present bool) (bool, error) {
	if op == "Null" {
		if len(want) != 1 || (want[0] != "true" && want[0] != "false") {
			return false, fmt.Errorf("condition Null needs true or false, not %v", want)
		}
		return (want[0] == "true") == !present, nil
	}
	set := ""
	switch {
	case strings.HasPrefix(op, "ForAllValues:"):
		set, op = "all", strings.TrimPrefix(op, "ForAllValues:")
	case strings.HasPrefix(op, "ForAnyValue:"):
		set, op = "any", strings.TrimPrefix(op, "ForAnyValue:")
	}
	ifExists := strings.HasSuffix(op, "IfExists")
	op = strings.TrimSuffix(op, "IfExists")
	match, negated, err := matcher(op)
	if err != nil {
		return false, err
	}
	one := func(v string) bool {
		for _, w := range want {
			if match(w, v) {
				return true
			}
		}
		return false
	}
	switch set {
	case "all": // every value of the request is allowed; vacuously true without values
		for _, v := range got {
			if one(v) == negated {
				return false, nil
			}
		}
		return true, nil
	case "any":
		for _, v := range got {
			if one(v) != negated {
				return true, nil
			}
		}
		return false, nil
	}
	if !present {
		return ifExists || negated, nil
	}
	any := false
	for _, v := range got {
		if one(v) {
			any = true
		}
	}
	return any != negated, nil
}

// matcher returns the comparison of a string operator and whether the operator is negated.
func matcher(op string) (func(want, got string) bool, bool, error) {
	switch op {
	case "StringEquals":
		return func(w, g string) bool { return w == g }, false, nil
	case "StringNotEquals":
		return func(w, g string) bool { return w == g }, true, nil
	case "StringEqualsIgnoreCase":
		return strings.EqualFold, false, nil
	case "StringNotEqualsIgnoreCase":
		return strings.EqualFold, true, nil
	case "StringLike":
		return glob, false, nil
	case "StringNotLike":
		return glob, true, nil
	case "Bool":
		return func(w, g string) bool { return strings.EqualFold(w, g) }, false, nil
	}
	return nil, false, fmt.Errorf("condition operator %s is not supported", op)
}
