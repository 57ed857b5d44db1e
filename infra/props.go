package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/core/sizing"
)

// StackProps configures the Nodewright stack for one cluster.
type StackProps struct {
	awscdk.StackProps
	// ClusterName is the EKS cluster this deployment manages.
	ClusterName string
	// Config is the validated NodePools and EC2NodeClasses, and the Settings item, to deploy into the
	// state table.
	Config []state.ConfigItem
	// Nodes is what Config's EC2NodeClasses give instances (roles, instance profiles, AMI parameters).
	Nodes NodeIdentities
	// RebalancePolicy is what a rebalance recommendation does: "event" (record it, the default) or
	// "replace" (replace the node ahead of a likely interruption).
	RebalancePolicy string
	// Settings are Karpenter's settings and feature gates (settingsFromContext), stored with Config.
	Settings settings.Settings
	// FunctionsDir holds the functions' bootstraps as `make build` writes them (<dir>/<fn>/bootstrap).
	FunctionsDir string
	// PendingPodWebhook deploys the pending-pod webhook (context value pendingPodWebhook, default true).
	// Without it pending pods are found by the provisioner's one-minute backstop: for regions without
	// Function URLs and clusters whose control-plane egress cannot reach one.
	PendingPodWebhook bool
	// AlarmTopicArn is the SNS topic the alarms notify; empty leaves them without actions.
	AlarmTopicArn string
	// ClusterPods is the cluster's expected size in pods (context value clusterPods, default
	// sizing.DefaultClusterPods); Sizes is each function's memory and timeout for it (sizing.For).
	ClusterPods int
	Sizes       map[string]sizing.Size
	// VPC places the functions that call the API server in the cluster's VPC, with the endpoints they
	// need and the isolated mode (context values vpcSubnetIds, vpcSecurityGroupIds, vpcEndpoints, vpcId,
	// isolatedVPC; see vpc.go).
	VPC VPCPlacement
}

// clusterNamePattern is EKS's rule for cluster names.
var clusterNamePattern = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$`)

// StackName is the CloudFormation stack name for the cluster.
func (p StackProps) StackName() string { return "Nodewright-" + p.ClusterName }

// stackPropsFromContext reads the app's context values and validates them.
func stackPropsFromContext(app awscdk.App) (StackProps, error) {
	str := func(key, env string) string {
		if v, ok := app.Node().TryGetContext(jsii.String(key)).(string); ok && v != "" {
			return v
		}
		return os.Getenv(env)
	}
	p := StackProps{ClusterName: str("clusterName", "")}
	if err := p.validate(); err != nil {
		return p, err
	}
	path := str("manifests", "")
	if path == "" {
		return p, fmt.Errorf("context value manifests is required: a file or folder of NodePool and EC2NodeClass YAML")
	}
	var err error
	// The settings come first: their feature gates decide which manifests may be deployed.
	if p.Settings, err = settingsFromContext(func(key string) interface{} { return app.Node().TryGetContext(jsii.String(key)) }); err != nil {
		return p, err
	}
	if p.Config, err = LoadConfig(path, p.Settings.FeatureGates); err != nil {
		return p, fmt.Errorf("context value manifests (%s): %w", path, err)
	}
	if p.Nodes, err = NodeIdentitiesFrom(p.Config); err != nil {
		return p, fmt.Errorf("context value manifests (%s): %w", path, err)
	}
	if account, region := str("account", "CDK_DEFAULT_ACCOUNT"), str("region", "CDK_DEFAULT_REGION"); account != "" || region != "" {
		p.Env = &awscdk.Environment{}
		if account != "" {
			p.Env.Account = jsii.String(account)
		}
		if region != "" {
			p.Env.Region = jsii.String(region)
		}
	}
	if p.RebalancePolicy, err = rebalancePolicy(str("rebalancePolicy", "")); err != nil {
		return p, err
	}
	settingsItem, err := state.SettingsItem(p.Settings)
	if err != nil {
		return p, err
	}
	p.Config = append(p.Config, settingsItem)
	if v := app.Node().TryGetContext(jsii.String("pendingPodWebhook")); v == nil {
		p.PendingPodWebhook = true
	} else if p.PendingPodWebhook, err = boolContext("pendingPodWebhook", v); err != nil {
		return p, err
	}
	if p.AlarmTopicArn, err = alarmTopicArn(str("alarmTopicArn", ""), p.Env); err != nil {
		return p, err
	}
	if p.ClusterPods, p.Sizes, err = clusterSizes(app.Node().TryGetContext(jsii.String("clusterPods"))); err != nil {
		return p, err
	}
	if p.VPC, err = vpcPlacementFromContext(func(key string) interface{} { return app.Node().TryGetContext(jsii.String(key)) }); err != nil {
		return p, err
	}
	if p.VPC.Isolated && len(p.Nodes.Roles) > 0 {
		return p, fmt.Errorf("context value isolatedVPC=true: the EC2NodeClasses name spec.role (%s), whose instance profile Nodewright "+
			"creates through the IAM API, which has no VPC endpoint: name an existing spec.instanceProfile in each EC2NodeClass instead",
			strings.Join(p.Nodes.Roles, ", "))
	}
	if p.FunctionsDir = str("functionsDir", ""); p.FunctionsDir == "" {
		p.FunctionsDir = "dist"
	}
	p.Description = jsii.String("Nodewright: serverless node autoscaling for EKS cluster " + p.ClusterName)
	return p, nil
}

func (p StackProps) validate() error {
	if p.ClusterName == "" {
		return fmt.Errorf("context value clusterName is required: set it in cdk.json or pass -c clusterName=NAME")
	}
	if !clusterNamePattern.MatchString(p.ClusterName) {
		return fmt.Errorf("context value clusterName %q is not a valid EKS cluster name (%s)", p.ClusterName, clusterNamePattern)
	}
	return nil
}

// The values of NODEWRIGHT_REBALANCE_POLICY the interruption function understands (interruption.RebalancePolicy;
// not imported, so the CDK app does not build the function's dependencies).
const (
	rebalanceEvent   = "event"
	rebalanceReplace = "replace"
)

// rebalancePolicy validates the rebalancePolicy context value; empty means the default, "event".
func rebalancePolicy(v string) (string, error) {
	switch v {
	case "":
		return rebalanceEvent, nil
	case rebalanceEvent, rebalanceReplace:
		return v, nil
	}
	return "", fmt.Errorf("context value rebalancePolicy %q is not supported: use %q (record the recommendation) or %q "+
		"(replace the node ahead of a likely interruption)", v, rebalanceEvent, rebalanceReplace)
}

// snsTopicArnPattern is an SNS topic ARN: partition, region, 12-digit account, topic name (up to 256
// letters, digits, hyphens and underscores, with .fifo for a FIFO topic).
var snsTopicArnPattern = regexp.MustCompile(`^arn:aws(-[a-z]+)*:sns:([a-z]{2}(-[a-z]+)+-\d+):\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$`)

// alarmTopicArn validates the alarmTopicArn context value; empty means no topic. CloudWatch notifies
// only topics in the alarm's own region, so a topic elsewhere is refused when env names the region.
func alarmTopicArn(v string, env *awscdk.Environment) (string, error) {
	if v == "" {
		return "", nil
	}
	m := snsTopicArnPattern.FindStringSubmatch(v)
	if m == nil {
		return "", fmt.Errorf("context value alarmTopicArn %q is not an SNS topic ARN: want arn:<partition>:sns:<region>:<account>:<topic>", v)
	}
	if env != nil && env.Region != nil && *env.Region != m[2] {
		return "", fmt.Errorf("context value alarmTopicArn %q is in region %s, but CloudWatch alarms in %s can notify only a topic in %s",
			v, m[2], *env.Region, *env.Region)
	}
	return v, nil
}

// boolContext reads a boolean context value: unset is false; true/false as JSON (cdk.json) or as text
// (-c key=true). Anything else is refused, naming the key.
func boolContext(key string, v interface{}) (bool, error) {
	switch v := v.(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		switch v {
		case "", "false":
			return false, nil
		case "true":
			return true, nil
		}
	}
	return false, fmt.Errorf("context value %s %v is not supported: use true or false", key, v)
}

// clusterSizes reads the clusterPods context value, a whole number of pods as JSON (cdk.json) or as text
// (-c clusterPods=60000); unset is sizing.DefaultClusterPods. It returns the value and each function's
// size for it; a value that is not a whole number or is outside sizing's tiers is refused, naming the key.
func clusterSizes(v interface{}) (int, map[string]sizing.Size, error) {
	pods := sizing.DefaultClusterPods
	switch v := v.(type) {
	case nil:
	case float64:
		if v != float64(int(v)) {
			return 0, nil, fmt.Errorf("context value clusterPods %v is not a whole number of pods", v)
		}
		pods = int(v)
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, nil, fmt.Errorf("context value clusterPods %q is not a whole number of pods", v)
		}
		pods = n
	default:
		return 0, nil, fmt.Errorf("context value clusterPods %v is not a whole number of pods", v)
	}
	sizes, err := sizing.For(pods)
	if err != nil {
		return 0, nil, fmt.Errorf("context value %w", err)
	}
	return pods, sizes, nil
}
