package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// apiServerFunctions are the functions that call the Kubernetes API server, by the logical-id prefix of
// their construct.
var apiServerFunctions = []string{"Provisioner", "Lifecycle", "Interruption", "Termination", "Disruption"}

// pricingFunctions price instances and so learn whether they run isolated.
var pricingFunctions = map[string]bool{"Provisioner": true, "Lifecycle": true, "Disruption": true}

const (
	testSubnets = "subnet-0123456789abcdef0,subnet-0fedcba9876543210"
	testGroups  = "sg-0123456789abcdef0"
	testVPC     = "vpc-0a1b2c3d4e5f60718"
)

func TestVPCPlacementFromContext(t *testing.T) {
	cases := []struct {
		name    string
		ctx     map[string]interface{}
		want    VPCPlacement
		wantErr string
	}{
		{name: "nothing set: outside any VPC", ctx: map[string]interface{}{}},
		{name: "subnets and groups as text", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-0123456789abcdef0, subnet-1234abcd",
			"vpcSecurityGroupIds": "sg-0123456789abcdef0"},
			want: VPCPlacement{SubnetIDs: []string{"subnet-0123456789abcdef0", "subnet-1234abcd"}, SecurityGroupIDs: []string{"sg-0123456789abcdef0"}}},
		{name: "subnets and groups as cdk.json lists", ctx: map[string]interface{}{"vpcSubnetIds": []interface{}{"subnet-1234abcd"},
			"vpcSecurityGroupIds": []interface{}{"sg-1234abcd", "sg-5678abcd"}},
			want: VPCPlacement{SubnetIDs: []string{"subnet-1234abcd"}, SecurityGroupIDs: []string{"sg-1234abcd", "sg-5678abcd"}}},
		{name: "endpoints and isolated", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd", "vpcSecurityGroupIds": "sg-1234abcd",
			"vpcEndpoints": "true", "vpcId": testVPC, "isolatedVPC": true},
			want: VPCPlacement{SubnetIDs: []string{"subnet-1234abcd"}, SecurityGroupIDs: []string{"sg-1234abcd"}, Endpoints: true, VpcID: testVPC, Isolated: true}},
		{name: "isolated alone", ctx: map[string]interface{}{"isolatedVPC": "true"}, want: VPCPlacement{Isolated: true}},
		{name: "subnets without groups", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd"},
			wantErr: `context value vpcSubnetIds "subnet-1234abcd" is set but vpcSecurityGroupIds is not`},
		{name: "groups without subnets", ctx: map[string]interface{}{"vpcSecurityGroupIds": "sg-1234abcd"},
			wantErr: `context value vpcSecurityGroupIds "sg-1234abcd" is set but vpcSubnetIds is not`},
		{name: "a subnet that is not an id", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd,private-a", "vpcSecurityGroupIds": "sg-1234abcd"},
			wantErr: `context value vpcSubnetIds "subnet-1234abcd,private-a": "private-a" is not an id like subnet-0123456789abcdef0`},
		{name: "a group that is not an id", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd", "vpcSecurityGroupIds": "sg-XYZ"},
			wantErr: `context value vpcSecurityGroupIds "sg-XYZ": "sg-XYZ" is not an id like sg-0123456789abcdef0`},
		{name: "a subnet twice", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd,subnet-1234abcd", "vpcSecurityGroupIds": "sg-1234abcd"},
			wantErr: `context value vpcSubnetIds "subnet-1234abcd,subnet-1234abcd" names subnet-1234abcd twice`},
		{name: "more groups than Lambda takes", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd",
			"vpcSecurityGroupIds": "sg-00000001,sg-00000002,sg-00000003,sg-00000004,sg-00000005,sg-00000006"},
			wantErr: "names 6 ids; a Lambda function takes at most 5"},
		{name: "endpoints without the VPC context", ctx: map[string]interface{}{"vpcEndpoints": true, "vpcId": testVPC},
			wantErr: "context value vpcEndpoints=true needs vpcSubnetIds and vpcSecurityGroupIds"},
		{name: "endpoints without vpcId", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd", "vpcSecurityGroupIds": "sg-1234abcd", "vpcEndpoints": true},
			wantErr: "context value vpcEndpoints=true needs vpcId"},
		{name: "vpcId without endpoints", ctx: map[string]interface{}{"vpcId": testVPC},
			wantErr: `context value vpcId "vpc-0a1b2c3d4e5f60718" is used only to create the VPC endpoints`},
		{name: "vpcId that is not an id", ctx: map[string]interface{}{"vpcSubnetIds": "subnet-1234abcd", "vpcSecurityGroupIds": "sg-1234abcd",
			"vpcEndpoints": true, "vpcId": "main"}, wantErr: `context value vpcId "main" is not a VPC id`},
		{name: "isolated not a bool", ctx: map[string]interface{}{"isolatedVPC": "yes"}, wantErr: "context value isolatedVPC yes is not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := vpcPlacementFromContext(func(key string) interface{} { return tc.ctx[key] })
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestStackVPCModes synthesizes the stack in each deployment mode and checks what each adds: nothing
// without the context; VpcConfig and scoped network-interface permissions on every function that calls
// the API server (never the webhook); the endpoints; the isolated mode's variable.
func TestStackVPCModes(t *testing.T) {
	t.Run("no VPC context: no VpcConfig, endpoint, network-interface permission or isolated variable", func(t *testing.T) {
		template, _ := synth(t)
		cfn := toCfn(t, template)
		for id, props := range cfn.ofType("AWS::Lambda::Function") {
			assert.NotContains(t, props, "VpcConfig", id)
			assert.NotContains(t, jsonString(t, props["Environment"]), EnvIsolatedVPC, id)
			assert.NotContains(t, jsonString(t, props["Environment"]), "AWS_ENDPOINT_URL", id)
		}
		assert.Empty(t, cfn.ofType("AWS::EC2::VPCEndpoint"))
		assert.Empty(t, cfn.ofType("AWS::EC2::SecurityGroup"))
		for id, props := range cfn.ofType("AWS::IAM::Policy") {
			assert.NotContains(t, jsonString(t, props), "NetworkInterface", id)
		}
	})

	t.Run("VPC context: every API-server function in the subnets, the webhook outside", func(t *testing.T) {
		template, annotations := synthWith(t, map[string]interface{}{"vpcSubnetIds": testSubnets, "vpcSecurityGroupIds": testGroups})
		cfn := toCfn(t, template)
		wantVPC := map[string]interface{}{
			"SubnetIds":        []interface{}{"subnet-0123456789abcdef0", "subnet-0fedcba9876543210"},
			"SecurityGroupIds": []interface{}{"sg-0123456789abcdef0"},
		}
		for _, fn := range apiServerFunctions {
			props := cfn.exact(t, "AWS::Lambda::Function", fn+"HandlerFunction")
			assert.Equal(t, wantVPC, props["VpcConfig"], fn)
			assert.NotContains(t, jsonString(t, props["Environment"]), "AWS_ENDPOINT_URL", fn)
			assert.NotContains(t, jsonString(t, props["Environment"]), EnvIsolatedVPC, fn)
		}
		inVPC := 0
		for id, props := range cfn.ofType("AWS::Lambda::Function") {
			if props["VpcConfig"] != nil {
				inVPC++
			}
			if strings.HasPrefix(id, "WebhookHandlerFunction") {
				assert.NotContains(t, props, "VpcConfig", "the webhook stays outside the VPC")
			}
		}
		assert.Equal(t, len(apiServerFunctions), inVPC, "only the functions that call the API server (not the webhook, not CDK's own)")
		assert.Empty(t, cfn.ofType("AWS::EC2::VPCEndpoint"), "no endpoints unless asked for")

		t.Run("each function waits for the policy Lambda attaches it with", func(t *testing.T) {
			for _, fn := range apiServerFunctions {
				for id, r := range cfn {
					if r["Type"] == "AWS::Lambda::Function" && strings.HasPrefix(id, fn+"HandlerFunction") {
						assert.Contains(t, jsonString(t, r["DependsOn"]), fn+"HandlerRoleDefaultPolicy", id)
					}
				}
			}
		})

		t.Run("network interfaces only in the given subnets and groups, no managed policy", func(t *testing.T) {
			env := cfnEnv{Region: "us-east-1", Account: "123456789012"}
			ownENI := "arn:aws:ec2:us-east-1:123456789012:network-interface/eni-0123456789abcdef0"
			for _, fn := range apiServerFunctions {
				stmts, err := policyStatements(cfn.roleStatements(t, fn+"HandlerRole"), env)
				require.NoError(t, err, fn)
				for _, c := range []struct {
					action, resource string
					allowed          bool
				}{
					{"ec2:CreateNetworkInterface", "arn:aws:ec2:us-east-1:123456789012:subnet/subnet-0fedcba9876543210", true},
					{"ec2:CreateNetworkInterface", "arn:aws:ec2:us-east-1:123456789012:security-group/sg-0123456789abcdef0", true},
					{"ec2:CreateNetworkInterface", ownENI, true},
					{"ec2:CreateNetworkInterface", "arn:aws:ec2:us-east-1:123456789012:subnet/subnet-99999999", false},
					{"ec2:CreateNetworkInterface", "arn:aws:ec2:us-east-1:123456789012:security-group/sg-99999999", false},
					{"ec2:DeleteNetworkInterface", ownENI, true},
					{"ec2:DeleteNetworkInterface", "arn:aws:ec2:us-east-1:210987654321:network-interface/eni-0123456789abcdef0", false},
					{"ec2:AssignPrivateIpAddresses", ownENI, true},
					{"ec2:UnassignPrivateIpAddresses", ownENI, true},
					{"ec2:DescribeNetworkInterfaces", "*", true},
					{"ec2:DescribeSubnets", "*", true},
				} {
					got := awscalls.Evaluate(stmts, awscalls.Check{Action: c.action, Resource: c.resource})
					assert.Equal(t, c.allowed, got.Allowed, "%s %s on %s: %s", fn, c.action, c.resource, got.Reason)
				}
			}
			webhook, err := policyStatements(cfn.roleStatements(t, "WebhookHandlerRole"), env)
			require.NoError(t, err)
			assert.False(t, awscalls.Evaluate(webhook, awscalls.Check{Action: "ec2:CreateNetworkInterface", Resource: ownENI}).Allowed)
			for id, props := range cfn.ofType("AWS::IAM::Role") {
				assert.NotContains(t, jsonString(t, props["ManagedPolicyArns"]), "AWSLambdaVPCAccessExecutionRole", id)
			}
		})

		t.Run("cdk-nag AwsSolutions finds nothing unsuppressed", func(t *testing.T) { noNagFindings(t, annotations) })
	})

	t.Run("endpoints and isolated mode", func(t *testing.T) {
		template, annotations := synthWith(t, map[string]interface{}{"vpcSubnetIds": testSubnets, "vpcSecurityGroupIds": testGroups,
			"vpcEndpoints": "true", "vpcId": testVPC, "isolatedVPC": "true", "manifests": withInstanceProfile(t)})
		cfn := toCfn(t, template)

		endpoints := cfn.ofType("AWS::EC2::VPCEndpoint")
		services := map[string]bool{}
		for id, props := range endpoints {
			svc := endpointServiceOf(t, props["ServiceName"])
			services[svc] = true
			assert.Equal(t, testVPC, props["VpcId"], id)
			assert.Equal(t, "Interface", props["VpcEndpointType"], id)
			assert.Equal(t, []interface{}{"subnet-0123456789abcdef0", "subnet-0fedcba9876543210"}, props["SubnetIds"], id)
			assert.Equal(t, svc != "dynamodb", props["PrivateDnsEnabled"], "%s: private DNS except DynamoDB, reached by its own name", id)
			assert.Contains(t, jsonString(t, props["SecurityGroupIds"]), "EndpointsSecurityGroup", id)
		}
		assert.Equal(t, map[string]bool{"ec2": true, "sqs": true, "ssm": true, "eks": true, "dynamodb": true}, services)

		_, sg := cfn.one(t, "AWS::EC2::SecurityGroup", "EndpointsSecurityGroup")
		assert.Equal(t, testVPC, sg["VpcId"])
		require.Len(t, sg["SecurityGroupIngress"], 1)
		ingress := sg["SecurityGroupIngress"].([]interface{})[0].(map[string]interface{})
		assert.Equal(t, "sg-0123456789abcdef0", ingress["SourceSecurityGroupId"])
		assert.EqualValues(t, 443, ingress["FromPort"])
		assert.EqualValues(t, 443, ingress["ToPort"])
		assert.NotContains(t, jsonString(t, sg), "0.0.0.0/0", "no open ingress or egress")

		for _, fn := range apiServerFunctions {
			props := cfn.exact(t, "AWS::Lambda::Function", fn+"HandlerFunction")
			vars := props["Environment"].(map[string]interface{})["Variables"].(map[string]interface{})
			assert.Contains(t, jsonString(t, vars["AWS_ENDPOINT_URL_DYNAMODB"]), "Endpointsdynamodb", fn)
			if pricingFunctions[fn] {
				assert.Equal(t, "true", vars[pricing.EnvIsolatedVPC], fn)
			} else {
				assert.NotContains(t, vars, EnvIsolatedVPC, "%s does not price", fn)
			}
		}
		webhook := cfn.exact(t, "AWS::Lambda::Function", "WebhookHandlerFunction")
		assert.NotContains(t, webhook, "VpcConfig")
		assert.NotContains(t, jsonString(t, webhook["Environment"]), "AWS_ENDPOINT_URL_DYNAMODB")
		assert.NotContains(t, jsonString(t, cfn.roleStatements(t, "LifecycleHandlerRole")), "pricing:GetProducts",
			"an isolated lifecycle is not allowed the Pricing API it never calls")

		noNagFindings(t, annotations)
	})
}

// withInstanceProfile is the sample manifests with the node class naming an instance profile instead of a
// role, as an isolated VPC needs.
func withInstanceProfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("manifests", "default.yaml"))
	require.NoError(t, err)
	out := strings.Replace(string(b), "role: KarpenterNodeRole-demo", "instanceProfile: KarpenterNodeInstanceProfile-demo", 1)
	require.NotEqual(t, string(b), out, "the sample names a role")
	path := filepath.Join(t.TempDir(), "manifests.yaml")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	return path
}

// TestIsolatedVPCRefusesNodeRoles: a node class with spec.role needs IAM, which an isolated VPC cannot
// reach, so the synth fails naming the setting and the fix.
func TestIsolatedVPCRefusesNodeRoles(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": "manifests",
		"isolatedVPC": "true"}})
	_, err := stackPropsFromContext(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "context value isolatedVPC=true: the EC2NodeClasses name spec.role (KarpenterNodeRole-demo)")
	assert.Contains(t, err.Error(), "name an existing spec.instanceProfile in each EC2NodeClass instead")

	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": withInstanceProfile(t),
		"isolatedVPC": "true"}})
	props, err := stackPropsFromContext(app)
	require.NoError(t, err)
	assert.True(t, props.VPC.Isolated)
}

// noNagFindings fails on every unsuppressed cdk-nag AwsSolutions error or warning.
func noNagFindings(t *testing.T, annotations assertions.Annotations) {
	t.Helper()
	errs := annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
	warns := annotations.FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
	for _, m := range append(*errs, *warns...) {
		finding, _ := json.Marshal(m)
		t.Errorf("cdk-nag: %s", finding)
	}
}

// endpointService is the service an endpoint's ServiceName, com.amazonaws.<region>.<service>, names.
func endpointServiceOf(t *testing.T, name interface{}) string {
	t.Helper()
	join, ok := name.(map[string]interface{})["Fn::Join"].([]interface{})
	require.True(t, ok, "ServiceName %v", name)
	parts := join[1].([]interface{})
	last, ok := parts[len(parts)-1].(string)
	require.True(t, ok, "ServiceName %v", name)
	return strings.TrimPrefix(last, ".")
}
