package provisioningqueue

import (
	"crypto/sha256"
	"encoding/hex"
)

// SQS FIFO delivers the messages of one group in order and holds every message behind one that is in
// flight: a batch whose invocation crashed or timed out keeps its group blocked for the queue's
// visibility timeout (6 minutes). So no group is shared by unrelated requests. The provisioner needs no
// ordering — its lease makes it single-writer and every run solves the whole cluster — and FIFO is kept
// for its five-minute deduplication of repeated wake-ups.

// maxGroupIDLen is the longest MessageGroupId SQS accepts.
const maxGroupIDLen = 128

// PodGroup is the message group of a pod's wake-up from the webhook: one per pod, so a stuck batch holds
// back only its own pods' later wake-ups (which the provisioner's one-minute backstop covers anyway).
func PodGroup(cluster, podUID string) string {
	return group(cluster, "pod", podUID)
}

// UrgentGroup is the message group of a request for replacement capacity for a disrupted claim (an
// interruption's, a drain's): one per claim, so it never waits behind pod wake-ups or another batch that
// is stuck.
func UrgentGroup(cluster, claim string) string {
	return group(cluster, "urgent", claim)
}

// group joins cluster, kind and subject; one too long for SQS is replaced by its SHA-256, which keeps
// distinct subjects in distinct groups.
func group(cluster, kind, subject string) string {
	g := cluster + "/" + kind + "/" + subject
	if len(g) <= maxGroupIDLen {
		return g
	}
	sum := sha256.Sum256([]byte(g))
	return kind + "/" + hex.EncodeToString(sum[:])
}
