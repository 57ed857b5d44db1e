// Package capacityreservation models and parses the aws.ec2 "EC2 Capacity Reservation Instance
// Interruption Warning": the owner of an interruptible capacity reservation reclaims capacity, and EC2
// terminates an instance running in it about two minutes later.
//
// Ring: pure core (standard library and messages only).
package capacityreservation
