package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// BrokenClassName names the scale-up scenario's second EC2NodeClass and the NodePool using it. The class
// selects a subnet by an id that does not exist, as a typo or a deleted subnet leaves it; the NodePool
// is tainted, so that no pod of the scenario could use it even if its class resolved (and Nodewright
// launches nothing for a NodePool whose class is not ready anyway): the scenario's nodes, prices and
// latencies are those of the default NodePool alone.
const BrokenClassName = "missing-subnet"

// brokenClassTaint is the taint of the NodePool BrokenClassName; the scenario's pods do not tolerate it.
const brokenClassTaint = "nodewright.sh/sandbox-missing-subnet"

// brokenClassConfig is the NodePool and EC2NodeClass BrokenClassName, applied beside SampleConfig as
// `nodewright apply` would.
var brokenClassConfig = fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %[1]s
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: %[1]s
      taints:
        - key: %[2]s
          value: "true"
          effect: NoSchedule
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
  limits:
    cpu: "10"
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: %[1]s
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-sandbox
  amiSelectorTerms:
    - tags:
        nodewright.sh/sandbox-ami: "true"
  subnetSelectorTerms:
    - id: subnet-0000000000000dead
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: sandbox
`, BrokenClassName, brokenClassTaint)

// BrokenNodeClass is what `kubectl` shows of the EC2NodeClass BrokenClassName and its NodePool, read
// back from the API server: the class mirror's Ready condition, whether `kubectl describe
// nodepools.nodewright.sh` finds a NodeClassNotReady Event on the NodePool mirror (and `kubectl describe
// ec2nodeclasses.nodewright.sh` a Warning on the class mirror whose reason is the class's not-ready
// reason), and the NodePool mirror's NodeClassReady condition.
type BrokenNodeClass struct {
	Name        string `json:"name"`
	ReadyStatus string `json:"readyStatus"`
	ReadyReason string `json:"readyReason"`
	// NodeClassNotReadyEvent: an Event of reason NodeClassNotReady whose involvedObject is the NodePool
	// mirror (kind, name and UID); ClassEvent: one whose involvedObject is the class mirror, of reason
	// ReadyReason.
	NodeClassNotReadyEvent bool   `json:"nodeClassNotReadyEvent"`
	ClassEvent             bool   `json:"classEvent"`
	NodePoolNodeClassReady string `json:"nodePoolNodeClassReady"`
	// EventMessage is the NodeClassNotReady Event's message, as `kubectl describe` prints it.
	EventMessage string `json:"eventMessage,omitempty"`
}

// Met reports whether the broken class shows as the issue asks: its Ready condition False with a
// reason, a NodeClassNotReady Event on its NodePool, and the NodePool's NodeClassReady False.
func (b BrokenNodeClass) Met() bool {
	return b.ReadyStatus == string(metav1.ConditionFalse) && b.ReadyReason != "" && b.NodeClassNotReadyEvent &&
		b.NodePoolNodeClassReady == string(metav1.ConditionFalse)
}

// brokenNodeClassOf reads the class and pool mirrors (nil: not there) and the Events of each, found by
// involvedObject kind, name and UID as `kubectl describe` finds them.
func brokenNodeClassOf(name string, class, pool *unstructured.Unstructured, classEvents, poolEvents []corev1.Event) BrokenNodeClass {
	b := BrokenNodeClass{Name: name}
	if class != nil {
		if c := conditionOf(class, apis.ConditionTypeReady); c != nil {
			b.ReadyStatus, b.ReadyReason = c["status"], c["reason"]
		}
		for _, e := range classEvents {
			if describes(e, class) && e.Reason != "" && e.Reason == b.ReadyReason {
				b.ClassEvent = true
			}
		}
	}
	if pool != nil {
		if c := conditionOf(pool, apis.ConditionTypeNodeClassReady); c != nil {
			b.NodePoolNodeClassReady = c["status"]
		}
		for _, e := range poolEvents {
			if describes(e, pool) && e.Reason == string(kube.ReasonNodeClassNotReady) {
				b.NodeClassNotReadyEvent, b.EventMessage = true, e.Message
			}
		}
	}
	return b
}

// describes reports whether `kubectl describe` of obj lists e: same kind, name and UID.
func describes(e corev1.Event, obj *unstructured.Unstructured) bool {
	return e.InvolvedObject.Kind == obj.GetKind() && e.InvolvedObject.Name == obj.GetName() && obj.GetUID() != "" &&
		e.InvolvedObject.UID == obj.GetUID()
}

// conditionOf is the condition typ of a mirror's status, its fields as strings; nil when absent.
func conditionOf(obj *unstructured.Unstructured, typ string) map[string]string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		out := map[string]string{}
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
		return out
	}
	return nil
}

// readBrokenNodeClass reads the mirrors of the class and pool name and their Events as the administrator
// running `kubectl describe` does.
func (s *Sandbox) readBrokenNodeClass(ctx context.Context, name string) (BrokenNodeClass, error) {
	dyn, err := dynamic.NewForConfig(s.CP.Config)
	if err != nil {
		return BrokenNodeClass{Name: name}, err
	}
	get := func(k mirror.Kind) (*unstructured.Unstructured, []corev1.Event, error) {
		obj, err := dyn.Resource(k.Resource()).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		evs, err := s.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": obj.GetKind(), "involvedObject.name": obj.GetName(), "involvedObject.uid": string(obj.GetUID())}.String()})
		if err != nil {
			return nil, nil, err
		}
		return obj, evs.Items, nil
	}
	class, classEvents, err := get(mirror.EC2NodeClasses)
	if err != nil {
		return BrokenNodeClass{Name: name}, err
	}
	pool, poolEvents, err := get(mirror.NodePools)
	if err != nil {
		return BrokenNodeClass{Name: name}, err
	}
	return brokenNodeClassOf(name, class, pool, classEvents, poolEvents), nil
}

// printBrokenNodeClass writes what kubectl shows of the NodePool and EC2NodeClass mirrors to the
// timeline: both tables and the NodeClassNotReady Event line of `kubectl describe`.
func (s *Sandbox) printBrokenNodeClass(ctx context.Context, b BrokenNodeClass) {
	s.printMirrorView(ctx, mirror.NodePools, "")
	s.printMirrorView(ctx, mirror.EC2NodeClasses, "")
	s.Timeline.Printf("mirrors", "$ kubectl describe nodepools.%s %s   (Events)", mirror.Group, b.Name)
	if !b.NodeClassNotReadyEvent {
		s.Timeline.Printf("mirrors", "  <none>: no %s Event on the NodePool mirror", kube.ReasonNodeClassNotReady)
		return
	}
	s.Timeline.Printf("mirrors", "  Warning  %s  nodewright  %s", kube.ReasonNodeClassNotReady, b.EventMessage)
}

// isBrokenClassProblem reports whether err is a function telling of the NodePool or EC2NodeClass
// BrokenClassName, which the scale-up scenario configures on purpose (the provisioner reports each run
// that the class is not ready and that its NodePool cannot launch).
func isBrokenClassProblem(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "NodePool "+BrokenClassName+" cannot launch") ||
		strings.Contains(msg, "EC2NodeClass "+BrokenClassName+" is not ready")
}

// configureBrokenClass applies the NodePool and EC2NodeClass BrokenClassName beside the configuration,
// as `nodewright apply` would, and starts the disruption function's mirror pass; stop ends the pass.
func (s *Sandbox) configureBrokenClass(ctx context.Context) (stop func(), err error) {
	pass, err := s.newConfigMirrorPass()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.brokenClass = true
	s.mu.Unlock()
	if err := applyConfig(ctx, s.Store, brokenClassConfig); err != nil {
		return nil, fmt.Errorf("applying the NodePool and EC2NodeClass %s: %w", BrokenClassName, err)
	}
	s.Timeline.Printf("scenario", "applied NodePool %[1]s (tainted %[2]s) and its EC2NodeClass %[1]s, whose subnetSelectorTerms name subnet-0000000000000dead, which does not exist",
		BrokenClassName, brokenClassTaint)
	// The first pass is the disruption function's cold start (its provisioner reads the instance catalog):
	// made before the scenario's clock starts, as a Lambda of its own would not share moto and the CPUs
	// with the provisioner's first run.
	began := time.Now()
	pass.run(ctx)
	s.Timeline.Printf("sandbox", "the disruption function's NodePool and EC2NodeClass mirror pass: first (cold) pass in %.1fs, then every %s (deployed: every minute, within each disruption run)",
		time.Since(began).Seconds(), s.opts.DisruptionEvery)
	return pass.start(s.runCtx), nil
}

// awaitBrokenNodeClass reads the broken class's mirrors and Events until they show it as Met says, for
// at most two of the pass's periods and 10 s (the Events follow the pass after the one that created the
// mirrors, once the writer knows their UIDs), prints what kubectl shows and returns the last read.
func (s *Sandbox) awaitBrokenNodeClass(ctx context.Context, name string) (BrokenNodeClass, error) {
	var b BrokenNodeClass
	var err error
	deadline := time.Now().Add(2*s.opts.DisruptionEvery + 10*time.Second)
	for {
		if b, err = s.readBrokenNodeClass(ctx, name); err != nil {
			return b, fmt.Errorf("reading the mirrors of %s: %w", name, err)
		}
		if b.Met() || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	s.printBrokenNodeClass(ctx, b)
	return b, nil
}
