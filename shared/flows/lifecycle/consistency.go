package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// shapeThreshold is the share of a resource's expected capacity below which a Node is inconsistent with
// its claim (Karpenter's node shape check: less than 90 %).
const shapeThreshold = 0.90

// ShapeIssues compares the capacity a claim's Node reports with what its instance type was expected to
// bring, for each resource the claim's pods requested, as Karpenter's consistency check does: cpu from
// the instance-cpu label, memory from instance-memory less the default VM overhead estimate (the
// expectation the launch was planned with; a deployment that sets a larger overhead is judged by the
// smaller one, so the check never cries wolf), and NVIDIA and AMD GPUs from the instance's GPU labels.
// Resources the claim recorded no expectation for are not judged. Each issue says what was expected and
// what the Node has.
func ShapeIssues(c state.Claim, node *corev1.Node) []string {
	expected := expectedCapacity(c.Labels)
	var issues []string
	for _, name := range slices.Sorted(maps.Keys(c.Requests)) {
		req, err := resource.ParseQuantity(c.Requests[name])
		want, known := expected[name]
		if err != nil || req.IsZero() || !known || want.IsZero() {
			continue
		}
		have := node.Status.Capacity[corev1.ResourceName(name)]
		share := have.AsApproximateFloat64() / want.AsApproximateFloat64()
		if share < shapeThreshold {
			issues = append(issues, fmt.Sprintf("expected %s of %s from instance type %s, the Node has %s (%.1f%% of it)",
				want.String(), name, c.InstanceType, have.String(), share*100))
		}
	}
	return issues
}

// expectedCapacity is what the instance type labels recorded on a launched claim promise.
func expectedCapacity(labels map[string]string) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	if cpu, err := strconv.ParseInt(labels[scheduling.LabelInstanceCPU], 10, 64); err == nil && cpu > 0 {
		out[string(corev1.ResourceCPU)] = *resource.NewQuantity(cpu, resource.DecimalSI)
	}
	if mem, err := strconv.ParseInt(labels[scheduling.LabelInstanceMemory], 10, 64); err == nil && mem > 0 {
		info := scheduling.InstanceInfo{MemoryMiB: mem, Architecture: labels[corev1.LabelArchStable]}
		out[string(corev1.ResourceMemory)] = *resource.NewQuantity(scheduling.MemoryCapacity(info, scheduling.DefaultVMMemoryOverheadPercent),
			resource.BinarySI)
	}
	if gpus, err := strconv.ParseInt(labels[scheduling.LabelInstanceGPUCount], 10, 64); err == nil && gpus > 0 {
		switch labels[scheduling.LabelInstanceGPUManufacturer] {
		case "nvidia":
			out[scheduling.ResourceNVIDIAGPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
		case "amd":
			out[scheduling.ResourceAMDGPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
		}
	}
	return out
}

// checkShape publishes a FailedConsistencyCheck Event for each shape issue of a claim whose Node has just
// initialized, on the Node and on its NodeClaim mirror (the publisher, mirror.ClaimEvents, gives it the
// mirror's UID), as Karpenter's consistency check does. Karpenter looks again every 10 minutes; a Node's
// capacity is fixed once it has registered and initialized, so one look, when the claim initializes,
// finds what there is to find, and a Node costs one check in its life.
func (p *passState) checkShape(ctx context.Context, c state.Claim, node *corev1.Node) {
	for _, issue := range ShapeIssues(c, node) {
		msg := fmt.Sprintf("NodeClaim %s: %s", c.Name, issue)
		p.event(ctx, node, corev1.EventTypeWarning, kube.ReasonFailedConsistencyCheck, msg)
		if p.r.deps.Events == nil {
			continue
		}
		e := kube.Event{Object: mirror.NodeClaimObject(c.Name, ""), Type: corev1.EventTypeWarning, Reason: kube.ReasonFailedConsistencyCheck, Message: msg}
		if _, err := p.r.deps.Events.Publish(ctx, e); err != nil {
			p.fail("nodeclaim/"+c.Name, err)
		}
	}
}
