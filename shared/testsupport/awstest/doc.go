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
// the test is skipped with the reason. moto runs as moto_server's own application under python3, with one
// change (motoserver.py): requests are served one at a time, because moto's backends are not thread-safe
// and AWS applies every call atomically — racing clients then test our conditional writes, not moto's
// locking. SQS calls take turns among themselves only, so a queue call does not wait behind a slow
// DynamoDB or EC2 call, as in AWS; calls that may deliver into queues (EventBridge, SNS) take both turns.
// $MOTO_SERVER may name another moto_server-compatible command. `make test` installs moto with pip when
// python3 cannot import it.
package awstest
