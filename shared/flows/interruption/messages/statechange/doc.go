// Package statechange models and parses the aws.ec2 "EC2 Instance State-change Notification".
// stopping and stopped give InstanceStoppedKind, shutting-down and terminated give
// InstanceTerminatedKind; pending, running and any state EC2 may add later give a messages.NoOp.
//
// Ring: pure core (standard library and messages only).
package statechange
