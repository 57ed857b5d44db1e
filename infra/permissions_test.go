package main

import (
	"encoding/json"

	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWildcardSuppressionsAreScoped proves a suppression exempts only the wildcard it names: the
// instance ARN pattern passes, an unrelated Resource::* on the same role is still reported.
func TestWildcardSuppressionsAreScoped(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Scoped"), nil)
	role := awsiam.NewRole(stack, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	allowTerminateOwned(role, "unit")
	allow(role, "Everything", []string{"ec2:DescribeInstances"}, []string{"*"}, nil)
	suppressWildcards(role, "instances are known only at run time", arnWildcard("ec2", `instance\/\*`, true))
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(nil), nil)

	errs := assertions.Annotations_FromStack(stack).FindError(jsii.String("*"),
		assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-IAM5.*")))
	if assert.Len(t, *errs, 1) {
		finding, err := json.Marshal((*errs)[0])
		require.NoError(t, err)
		assert.Contains(t, string(finding), `AwsSolutions-IAM5[Resource::*]`)
	}
}
