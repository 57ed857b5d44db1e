package awscalls

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnvDir names the directory recordings are written to; nothing is recorded when it is unset.
const EnvDir = "NODEWRIGHT_AWS_CALLS"

// Call is one SDK operation a function made.
type Call struct {
	// Function is the Lambda function whose code made the call (provisioner, lifecycle, ...).
	Function string `json:"function"`
	// Deployment is the ID of the Deployment the call ran against.
	Deployment string `json:"deployment"`
	// Service and Operation are the SDK's service id and operation name (EC2, CreateFleet).
	Service   string `json:"service"`
	Operation string `json:"operation"`
	// Checks are what IAM authorises for the call: one per action and resource.
	Checks []Check `json:"checks"`
	// Error is the call's error, if it failed (it still needed permission).
	Error string `json:"error,omitempty"`
}

// Check is one authorisation IAM makes for a call.
type Check struct {
	Action   string `json:"action"`   // service prefix and action, e.g. dynamodb:PutItem
	Resource string `json:"resource"` // an ARN, or "*" for actions without resource-level permissions
	// Context holds the request's condition keys: aws:RequestTag/<k>, aws:ResourceTag/<k>, aws:TagKeys,
	// ec2:CreateAction, iam:PassedToService.
	Context map[string][]string `json:"context,omitempty"`
}

func (c Check) String() string {
	s := c.Action + " on " + c.Resource
	if len(c.Context) > 0 {
		keys := make([]string, 0, len(c.Context))
		for k := range c.Context {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + strings.Join(c.Context[k], ",")
		}
		s += " [" + strings.Join(parts, " ") + "]"
	}
	return s
}

// ReadDir reads every recording in dir.
func ReadDir(dir string) ([]Call, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var calls []Call
	for _, f := range files {
		cs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		calls = append(calls, cs...)
	}
	return calls, nil
}

func readFile(path string) ([]Call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return calls, nil
}
