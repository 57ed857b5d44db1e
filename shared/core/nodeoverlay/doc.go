// Package nodeoverlay applies Karpenter's NodeOverlays (karpenter.sh/v1alpha1, feature gate NodeOverlay)
// to the instance types of each NodePool: an overlay whose requirements select an instance type (its
// labels, the NodePool's name and template labels) and some of its offerings (zone, zone id, capacity
// type, reservation) sets those offerings' price — an absolute price or an adjustment — and sets
// extended resources on the type.
//
// Overlays are taken by weight, heaviest first (unset weight counts as 0), ties by name from Z to A.
// Each offering takes the price of the first overlay that prices it, each extended resource the value of
// the first overlay that sets it. Two overlays of the same weight that both price one offering, or both
// set one resource, conflict: the one taken second is applied nowhere (Karpenter marks it
// ValidationSucceeded=False, reason Conflict) and Apply names it.
//
// It is part of the pure core: beside the standard library and k8s.io API types it imports only
// Nodewright's scheduling, apis and settings packages, and never talks to AWS or
// Kubernetes. Apply never changes the instance types it is given: an overlaid type is a copy that shares
// what did not change (requirements; offerings and resources when only the other changed).
package nodeoverlay
