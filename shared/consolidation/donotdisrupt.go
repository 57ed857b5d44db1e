package consolidation

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/disruption"
	"github.com/nodewright/nodewright/shared/kube"
)

// invalidDoNotDisrupt publishes an InvalidDoNotDisruptAnnotation Event on every pod of a Nodewright node
// whose karpenter.sh/do-not-disrupt value is neither "true" nor a duration, as Karpenter does: such a
// value protects nothing (the engine reads it the same way), and its owner should know. The Recorder
// drops repeats, so a value left in place is not reported again every run.
func (r *Runner) invalidDoNotDisrupt(ctx context.Context, w *world, rep *Report) {
	for i := range w.input.Nodes {
		n := &w.input.Nodes[i]
		if n.NodePool == "" {
			continue
		}
		for _, p := range n.Pods {
			if _, _, err := disruption.DoNotDisrupt(p, w.input.Now); err != nil {
				r.publish(ctx, kube.Event{Object: kube.PodObject(p), Type: corev1.EventTypeWarning,
					Reason: kube.ReasonInvalidDoNotDisruptAnnotation, Message: err.Error()}, rep)
			}
		}
	}
}
