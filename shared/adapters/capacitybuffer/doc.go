// Package capacitybuffer keeps headroom as Karpenter does with SIG Autoscaling's CapacityBuffer
// (autoscaling.x-k8s.io/v1beta1, feature gate CapacityBuffer, off by default): each buffer asks for
// room for a number of copies ("chunks") of a pod template, and Nodewright keeps that room by adding
// virtual pods to what it plans for.
//
// It is a use case between the Kubernetes adapter (kube.Buffers satisfies Cluster) and the runs that
// use it: it reads, resolves and sizes buffers (read.go, resolve.go, replicas.go), makes their virtual
// pods (virtualpods.go) and writes back their status (status.go). It never reads the clock (the
// caller passes the time) and decides nothing about nodes:
//
//   - shared/flows/provisioning adds the virtual pods to the pending pods of a run; the solver places them
//     as any pod (room on existing nodes and claims in flight first, else a new claim), and the run
//     writes each buffer's status from where they went (Tally). Virtual pods get no Event, record or
//     nomination.
//   - shared/flows/disruptionrun places them on the existing nodes before the engine decides, binding them
//     there in its input: a node holding buffer room is not empty, and a command must find that room
//     again elsewhere or launch it (shared/core/disruption treats them as pods no PodDisruptionBudget or
//     do-not-disrupt annotation holds).
//
// Bounds: one LIST of at most MaxBuffers buffers per read, one GET per object they name (shared),
// at most MaxVirtualPods virtual pods; see README.md for the user's view.
package capacitybuffer
