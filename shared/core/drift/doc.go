// Package drift decides whether a launched claim has drifted from its NodePool and EC2NodeClass as they
// are now, as Karpenter v1 does, and whether it has expired.
//
// It is a pure core: standard library only, no clients, no clock (the caller passes now). Its inputs are
// its own small types, built by package driftinput from the claim record, the configuration and the node
// class resolver's answer, so the caller is one call away from a decision.
//
// Three rules keep a decision safe:
//   - a hash computed with another hash version than the current one is re-stamped, never drift;
//   - a resolution that failed or came back incomplete decides nothing for the kinds that read it;
//   - what a claim did not record (claims written before it was) is unknown, never drift.
package drift
