// Package rebalance models and parses the aws.ec2 "EC2 Instance Rebalance Recommendation": a spot
// instance is at elevated risk of interruption. It carries no deadline.
//
// Ring: pure core (standard library and messages only).
package rebalance
