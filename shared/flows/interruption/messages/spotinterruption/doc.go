// Package spotinterruption models and parses the aws.ec2 "EC2 Spot Instance Interruption Warning":
// EC2 will stop, hibernate or terminate a spot instance about two minutes after the event's time.
//
// Ring: pure core (standard library and messages only).
package spotinterruption
