// Package awstest runs a real moto_server for tests that talk to AWS APIs: EC2, SQS, DynamoDB,
// EventBridge, SSM and STS speak their real wire protocols against it.
//
// A test package shares one moto per test binary:
//
//	func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		moto := awstest.Shared(t) // started on first use, state reset before every test
//		client := sqs.NewFromConfig(moto.Config())
//		…
//	}
//
// Tests that share moto must not run in parallel with each other (Shared resets all state); a test that
// needs isolation starts its own with Start. Under CI=true a moto that cannot start fails the test; elsewhere
// the test is skipped with the reason. The binary is $MOTO_SERVER, else moto_server on PATH, else
// `python3 -m moto.server`; `make test` installs moto with pip when none of those exists.
package awstest
