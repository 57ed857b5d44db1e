// Package driftinput builds the drift core's inputs from what the functions hold: a claim record
// (state.Claim), its NodePool and EC2NodeClass as configured (apis), the node class resolver's answer
// (nodeclass.Resolution) and, when known, its Node's labels and EC2's current description of its instance.
// It reads nothing itself: a caller with those in hand is one call away from drift.Detect and
// drift.Expired.
package driftinput
