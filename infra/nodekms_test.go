package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// encryptedManifests are a NodePool and EC2NodeClasses whose volumes are encrypted with customer managed
// keys named each way kmsKeyID allows: a key id, a key ARN, an alias and an alias ARN.
const encryptedManifests = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: by-id}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: by-id}
spec:
  role: NodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: kms}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: kms}}]
  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs: {volumeSize: 20Gi, volumeType: gp3, encrypted: true, kmsKeyID: 1234abcd-12ab-34cd-56ef-1234567890ab}
    - deviceName: /dev/xvdb
      ebs: {volumeSize: 50Gi, volumeType: gp3, encrypted: true, kmsKeyID: "arn:aws:kms:us-east-1:111122223333:key/0987dcba-09fe-87dc-65ba-ab0987654321"}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: by-alias}
spec:
  role: NodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: kms}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: kms}}]
  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs: {volumeSize: 20Gi, volumeType: gp3, encrypted: true, kmsKeyID: alias/nodes}
    - deviceName: /dev/xvdb
      ebs: {volumeSize: 50Gi, volumeType: gp3, encrypted: true, kmsKeyID: "arn:aws:kms:us-east-1:444455556666:alias/shared-nodes"}
`

func synthEncrypted(t *testing.T) (cfnTemplate, assertions.Annotations) {
	t.Helper()
	manifests := filepath.Join(t.TempDir(), "manifests.yaml")
	require.NoError(t, os.WriteFile(manifests, []byte(encryptedManifests), 0o600))
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "kms", "manifests": manifests,
		"functionsDir": fakeFunctions(t)}})
	props, err := stackPropsFromContext(app)
	require.NoError(t, err)
	stack := NewNodewrightStack(app, props.StackName(), props)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	return toCfn(t, assertions.Template_FromStack(stack.Stack, nil)), assertions.Annotations_FromStack(stack.Stack)
}

// TestLaunchingRolesMayUseTheNodeClassesVolumeKeys: an EC2NodeClass that encrypts volumes with a customer
// managed key needs the launching role to let EC2 use that key (describe, data key, grant); without it
// every instance terminated at launch. The provisioner's and the disruption function's roles (both launch)
// get exactly those actions on exactly those keys, through EC2 in the stack's region only, and cdk-nag
// finds nothing unsuppressed.
func TestLaunchingRolesMayUseTheNodeClassesVolumeKeys(t *testing.T) {
	cfn, annotations := synthEncrypted(t)
	env := cfnEnv{Region: "us-east-1", Account: "123456789012"}
	via := map[string][]string{"kms:ViaService": {"ec2.us-east-1.amazonaws.com"}}
	for _, role := range []string{"ProvisionerHandlerRole", "DisruptionHandlerRole"} {
		t.Run(role, func(t *testing.T) {
			stmts, err := policyStatements(cfn.roleStatements(t, role), env)
			require.NoError(t, err)
			bySid := map[string]awscalls.Statement{}
			for _, s := range stmts {
				bySid[s.Sid] = s
			}
			keys := []string{"arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
				"arn:aws:kms:us-east-1:111122223333:key/0987dcba-09fe-87dc-65ba-ab0987654321"}
			use := bySid["NodeVolumeKeys"]
			assert.ElementsMatch(t, []string{"kms:DescribeKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:Decrypt",
				"kms:ReEncryptFrom", "kms:ReEncryptTo"}, use.Actions)
			assert.ElementsMatch(t, keys, use.Resources)
			assert.Equal(t, map[string]map[string][]string{"StringEquals": via}, use.Conditions)
			grant := bySid["NodeVolumeKeyGrants"]
			assert.Equal(t, []string{"kms:CreateGrant"}, grant.Actions)
			assert.ElementsMatch(t, keys, grant.Resources)
			assert.Equal(t, map[string]map[string][]string{"StringEquals": via, "Bool": {"kms:GrantIsForAWSResource": {"true"}}}, grant.Conditions)

			aliased := map[string]string{}
			for _, sid := range []string{"NodeVolumeKeysByAlias0", "NodeVolumeKeysByAlias1"} {
				s := bySid[sid]
				require.Len(t, s.Resources, 1, sid)
				require.Len(t, s.Conditions["ForAnyValue:StringEquals"]["kms:ResourceAliases"], 1, sid)
				aliased[s.Resources[0]] = s.Conditions["ForAnyValue:StringEquals"]["kms:ResourceAliases"][0]
				assert.Equal(t, via, s.Conditions["StringEquals"], sid)
				assert.Equal(t, via, bySid[sid+"Grants"].Conditions["StringEquals"], sid)
				assert.Equal(t, []string{"kms:CreateGrant"}, bySid[sid+"Grants"].Actions)
			}
			assert.Equal(t, map[string]string{
				"arn:aws:kms:us-east-1:123456789012:key/*": "alias/nodes",
				"arn:aws:kms:us-east-1:444455556666:key/*": "alias/shared-nodes",
			}, aliased, "a key named by alias is allowed in its account only when it carries the alias")
		})
	}
	t.Run("cdk-nag AwsSolutions finds nothing unsuppressed", func(t *testing.T) {
		errs := annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		for _, e := range *errs {
			finding, _ := json.Marshal(e)
			t.Errorf("cdk-nag: %s", finding)
		}
	})
}

// TestNoVolumeKeysNoKMSStatements: a deployment whose node classes use no customer managed key gets no
// KMS permission at all.
func TestNoVolumeKeysNoKMSStatements(t *testing.T) {
	template, _ := synth(t)
	for _, s := range toCfn(t, template).statements(t, "ProvisionerHandlerRole") {
		for _, a := range strs(s["Action"]) {
			assert.NotContains(t, a, "kms:", "statement %v", s["Sid"])
		}
	}
}

// roleStatements are the statements of every policy attached to the role (logical id prefix): its
// default policy and the policies CDK splits off when it grows large.
func (c cfnTemplate) roleStatements(t *testing.T, rolePrefix string) []map[string]interface{} {
	t.Helper()
	var out []map[string]interface{}
	for _, typ := range []string{"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"} {
		for _, props := range c.ofType(typ) {
			attached := false
			roles, _ := props["Roles"].([]interface{})
			for _, r := range roles {
				if m, ok := r.(map[string]interface{}); ok && strings.HasPrefix(fmt.Sprint(m["Ref"]), rolePrefix) {
					attached = true
				}
			}
			if !attached {
				continue
			}
			for _, s := range props["PolicyDocument"].(map[string]interface{})["Statement"].([]interface{}) {
				out = append(out, s.(map[string]interface{}))
			}
		}
	}
	require.NotEmpty(t, out, "no policy attached to %s", rolePrefix)
	return out
}
