package provisioning

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// summarySample is how many pod names a summary record carries, newest first.
const summarySample = 10

// maxSummaries caps the summary records of one run: reasons beyond the most common ones are folded into
// one summary, so a solver reason that names each pod's own requests cannot turn back into a record per pod.
const maxSummaries = 20

// unschedulableSummaries are the run's summary records (state.UnschedulableSubject): one per reason that
// has a pod with a new verdict (due), counting every pod of the run that cannot be provisioned for that
// reason, most common reason first. failures and due are sorted newest first by the caller or here.
func unschedulableSummaries(runID string, failures, due []scheduling.PodFailure, at time.Time) []state.Decision {
	changed := map[string]bool{}
	for _, f := range due {
		changed[f.Reason] = true
	}
	all := append([]scheduling.PodFailure(nil), failures...)
	newestFirst(all)
	type group struct {
		reason string
		pods   []string
		count  int
	}
	var groups []*group
	byReason := map[string]*group{}
	for _, f := range all {
		if !changed[f.Reason] {
			continue
		}
		g := byReason[f.Reason]
		if g == nil {
			g = &group{reason: f.Reason}
			byReason[f.Reason] = g
			groups = append(groups, g)
		}
		g.count++
		if len(g.pods) < summarySample {
			g.pods = append(g.pods, f.PodName)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].count > groups[j].count })
	if len(groups) > maxSummaries {
		other := &group{}
		for _, g := range groups[maxSummaries-1:] {
			other.count += g.count
			if len(other.pods) < summarySample {
				other.pods = append(other.pods, g.pods[:min(len(g.pods), summarySample-len(other.pods))]...)
			}
		}
		other.reason = fmt.Sprintf("%d other reasons", len(groups)-maxSummaries+1)
		groups = append(groups[:maxSummaries-1], other)
	}
	out := make([]state.Decision, 0, len(groups))
	for i, g := range groups {
		out = append(out, state.Decision{Subject: state.UnschedulableSubject, ID: fmt.Sprintf("%s-%d", runID, i),
			Kind: "CannotProvision", Reason: "FailedScheduling", At: at,
			Message: fmt.Sprintf("%s pods: %s", thousands(g.count), g.reason),
			Details: map[string]string{"pods": strconv.Itoa(g.count), "sample": strings.Join(g.pods, " ")}})
	}
	return out
}

// newestFirst sorts failures by their pods' creation, newest first (a failure without its pod last),
// then by name, so the cap keeps the same pods from run to run.
func newestFirst(failures []scheduling.PodFailure) {
	created := func(f scheduling.PodFailure) time.Time {
		if f.Pod == nil {
			return time.Time{}
		}
		return f.Pod.CreationTimestamp.Time
	}
	sort.SliceStable(failures, func(i, j int) bool {
		ci, cj := created(failures[i]), created(failures[j])
		if !ci.Equal(cj) {
			return ci.After(cj)
		}
		return failures[i].PodName < failures[j].PodName
	})
}

// thousands writes n with comma separators: 1412 → "1,412".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
