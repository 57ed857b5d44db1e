package sandbox

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// MirrorCheck is how the NodeClaim mirrors stand against the live claims.
type MirrorCheck struct {
	// Claims counts the live claims; Matching the mirrors whose node, phase and conditions match their
	// claim's (see mirrorMismatch); Mismatches says why the others do not.
	Claims, Matching int
	Mismatches       []string
	// Lag is, for every step a live claim took (created, launched, registered, initialized), the time
	// from the claim's record of the step to its mirror first showing it; a step never shown counts the
	// time until the check.
	Lag Percentiles
}

// checkMirrors compares the mirrors with the live claims. It waits (at most wait) until they all match,
// since a pass writes a claim's mirror at its end: the lag is measured apart, from the watch.
func (s *Sandbox) checkMirrors(ctx context.Context, w *mirrorWatch, wait time.Duration) (MirrorCheck, error) {
	deadline := time.Now().Add(wait)
	for {
		chk, err := s.compareMirrors(ctx, w)
		if err != nil || chk.Matching == chk.Claims || time.Now().After(deadline) || ctx.Err() != nil {
			return chk, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (s *Sandbox) compareMirrors(ctx context.Context, w *mirrorWatch) (MirrorCheck, error) {
	var chk MirrorCheck
	claims, err := s.Store.ListClaims(ctx)
	if err != nil {
		return chk, err
	}
	dyn, err := dynamic.NewForConfig(s.CP.Config)
	if err != nil {
		return chk, err
	}
	list, err := dyn.Resource(mirror.NodeClaims.Resource()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return chk, fmt.Errorf("listing the NodeClaim mirrors: %w", err)
	}
	mirrors := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		mirrors[list.Items[i].GetName()] = &list.Items[i]
	}
	nodes, err := s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return chk, err
	}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		byName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	now := time.Now()
	var lags []time.Duration
	for _, c := range claims {
		if !c.Lifecycle.Live() {
			continue
		}
		chk.Claims++
		if why := mirrorMismatch(c, byName[c.NodeName], mirrors[c.Name]); why != "" {
			chk.Mismatches = append(chk.Mismatches, c.Name+": "+why)
		} else {
			chk.Matching++
		}
		for _, step := range mirrorSteps {
			at := claimStep(c, step)
			if at == nil {
				continue
			}
			seen, ok := w.firstSeen(c.Name, step)
			if !ok {
				seen = now
			}
			lags = append(lags, max(seen.Sub(*at), 0))
		}
	}
	slices.Sort(chk.Mismatches)
	chk.Lag = percentiles(lags)
	return chk, nil
}

// claimStep is when the claim's record says it took step (nil: not yet).
func claimStep(c state.Claim, step string) *time.Time {
	switch step {
	case stepCreated:
		return &c.CreatedAt
	case apis.ConditionTypeLaunched:
		return c.LaunchedAt
	case apis.ConditionTypeRegistered:
		return c.RegisteredAt
	case apis.ConditionTypeInitialized:
		return c.InitializedAt
	}
	return nil
}

// mirrorMismatch says how the mirror differs from what the builder makes of the claim and its Node now
// ("" when it matches): its node, its phase (how far Launched, Registered and Initialized got) and
// every condition's type and status. Reasons are compared for the conditions that are True: an Unknown
// condition's reason comes from why the last pass waited, which the record does not hold.
func mirrorMismatch(c state.Claim, node *corev1.Node, u *unstructured.Unstructured) string {
	if u == nil {
		return "no mirror"
	}
	want := mirror.NodeClaim(mirror.Claim{Record: c, Node: node}).Status.(mirror.NodeClaimStatus)
	var problems []string
	if got, _, _ := unstructured.NestedString(u.Object, "status", "nodeName"); got != want.NodeName {
		problems = append(problems, fmt.Sprintf("node %q, claim %q", got, want.NodeName))
	}
	got := mirrorConditions(u)
	wanted := map[string]condition{}
	for _, wc := range want.Conditions {
		wanted[wc.Type] = condition{status: wc.Status, reason: wc.Reason}
	}
	if gp, wp := phase(got), phase(wanted); gp != wp {
		problems = append(problems, fmt.Sprintf("phase %s, claim %s", gp, wp))
	}
	types := map[string]bool{}
	for t := range wanted {
		types[t] = true
	}
	for t := range got {
		types[t] = true
	}
	for _, typ := range slices.Sorted(maps.Keys(types)) {
		g, w := got[typ], wanted[typ]
		if g.status != w.status || (w.status == metav1.ConditionTrue && g.reason != w.reason) {
			problems = append(problems, fmt.Sprintf("%s %s/%s, claim %s/%s", typ, orNone(string(g.status)), g.reason, orNone(string(w.status)), w.reason))
		}
	}
	return strings.Join(problems, "; ")
}

// phase is the furthest of Launched, Registered and Initialized that is True, then Disrupting while a
// DisruptionReason is True.
func phase(conds map[string]condition) string {
	p := "Pending"
	for _, typ := range []string{apis.ConditionTypeLaunched, apis.ConditionTypeRegistered, apis.ConditionTypeInitialized} {
		if conds[typ].status == metav1.ConditionTrue {
			p = typ
		}
	}
	if conds[apis.ConditionTypeDisruptionReason].status == metav1.ConditionTrue {
		p += "/Disrupting"
	}
	return p
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}
