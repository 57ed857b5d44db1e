package disruptionrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// newBalancedFixture is newFixture with NodePool default's consolidationPolicy Balanced.
func newBalancedFixture(t *testing.T) *fixture {
	f := newFixture(t, "100%")
	objs := decode(t, strings.Replace(fmt.Sprintf(poolYAML, "100%"), "WhenEmptyOrUnderutilized", "Balanced", 1))
	spec, err := json.Marshal(objs.NodePools[0])
	require.NoError(t, err)
	f.store.config = []state.ConfigItem{{Kind: state.KindNodePool, Name: "default", Spec: string(spec)}}
	return f
}

// TestBalancedApprovalIsPublished: three medium nodes ($0.20/h, one pod each) replaced by one spot
// medium ($0.08/h) save 86.7% of the pool's cost for all of its disruption: score 0.87, approved.
// Each node gets ConsolidationApproved with the score, and the run reports the score.
func TestBalancedApprovalIsPublished(t *testing.T) {
	f := newBalancedFixture(t)
	f.runner.cfg.MaxCommands = 1
	for _, n := range []string{"n1", "n2", "n3"} {
		f.node(n, "medium", "1")
	}
	rep := f.run()
	require.Len(t, rep.Commands, 1)
	require.NotNil(t, rep.Commands[0].Score)
	assert.True(t, rep.Commands[0].Score.Approved)
	require.Len(t, rep.Scores, 1)
	assert.InDelta(t, 0.52/0.6, rep.Scores[0].Score.Score, 1e-9)
	for _, n := range []string{"n1", "n2", "n3"} {
		assert.Equal(t, 1, f.events.count(n, kube.ReasonConsolidationApproved), n)
		assert.Zero(t, f.events.count(n, kube.ReasonConsolidationRejected), n)
		assert.Equal(t, "Balanced consolidation: replace nodes n1, n2, n3 saving $0.5200/hour is approved: "+
			"NodePool default scores 0.87 >= 0.50 (k 2: saves 86.7% of its cost for 100.0% of its disruption cost)",
			f.events.message(n, kube.ReasonConsolidationApproved))
	}
	assert.Equal(t, 3, rep.ScoreEvents)
}

// TestBalancedRejectionIsPublished: n1 (large, $0.40/h) carries two pods of eviction cost 10 each, 21
// of the pool's 23 disruption cost; its replacement by a small spot node saves $0.36/h of the pool's
// $0.80/h, so it scores 0.45/0.913 = 0.49 and is rejected (deleting it would score 0.55, so it is
// simulated). n1 gets ConsolidationRejected with the score, once while the score stays the same.
func TestBalancedRejectionIsPublished(t *testing.T) {
	f := newBalancedFixture(t)
	f.node("keep", "large")
	blocker := f.pod("blocker", "keep", "7500m")
	blocker.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
	f.node("n1", "large")
	for _, name := range []string{"web", "api"} {
		p := f.pod(name, "n1", "500m")
		prio := int32(9 << 25)
		p.Spec.Priority = &prio
	}
	rep := f.run()
	assert.Empty(t, rep.Commands)
	require.Len(t, rep.Scores, 1)
	m := rep.Scores[0]
	assert.Equal(t, []string{"n1"}, m.Nodes)
	assert.False(t, m.Score.Approved)
	assert.InDelta(t, (0.36/0.8)/(21.0/23.0), m.Score.Score, 1e-9)
	assert.Equal(t, 1, f.events.count("n1", kube.ReasonConsolidationRejected))
	assert.Equal(t, "Balanced consolidation: replace node n1 saving $0.3600/hour is rejected: "+
		"NodePool default scores 0.49 < 0.50 (k 2: saves 45.0% of its cost for 91.3% of its disruption cost)",
		f.events.message("n1", kube.ReasonConsolidationRejected))
	assert.Zero(t, f.events.count("keep", kube.ReasonConsolidationRejected))

	f.clock.Advance(DefaultKeptEvery / 2)
	f.run()
	assert.Equal(t, 1, f.events.count("n1", kube.ReasonConsolidationRejected), "the same rejection within KeptEvery is not news")
}

// TestScoreEventsAreBoundedPerRun: a decision that rejects 150 single-node moves reports
// MaxReportedScores of them and publishes MaxScoreEvents Events; a run deciding the same again within
// KeptEvery publishes none of those already published.
func TestScoreEventsAreBoundedPerRun(t *testing.T) {
	f := newBalancedFixture(t)
	var res disruption.Result
	for i := range 150 {
		res.Rejected = append(res.Rejected, disruption.ScoredMove{Method: disruption.MethodSingle, Action: disruption.ActionDelete,
			Nodes: []string{fmt.Sprintf("n%03d", i)}, SavingsPerHour: 0.1,
			Score: disruption.Score{Score: 0.25, Threshold: 0.5, K: 2, Pools: []disruption.PoolScore{{NodePool: "default", Score: 0.25}}}})
	}
	var rep Report
	f.runner.publishScores(context.Background(), res, &rep)
	assert.Len(t, rep.Scores, MaxReportedScores)
	assert.Equal(t, MaxScoreEvents, rep.ScoreEvents)
	assert.Len(t, f.events.events, MaxScoreEvents)
	f.runner.publishScores(context.Background(), res, &rep)
	assert.Len(t, f.events.events, MaxScoreEvents, "the run's bound is spent")

	var next Report
	f.runner.publishScores(context.Background(), res, &next)
	assert.Equal(t, MaxScoreEvents, next.ScoreEvents, "a later run publishes the next nodes, not those already told")
	assert.Equal(t, 1, f.events.count("n000", kube.ReasonConsolidationRejected))
	assert.Equal(t, 1, f.events.count("n020", kube.ReasonConsolidationRejected))
}
