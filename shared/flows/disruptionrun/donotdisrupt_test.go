package disruptionrun

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// timed adds a pod on node protected by do-not-disrupt for d, started age ago.
func (f *fixture) timed(name, node, d string, age time.Duration) {
	p := f.pod(name, node, "100m")
	p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: d}
	started := metav1.NewTime(f.clock.Now().Add(-age))
	p.Status.StartTime = &started
}

// A duration-valued do-not-disrupt tells its pod until when it holds (DoNotDisruptUntil), once, and
// that it ended (DoNotDisruptGracePeriodElapsed) once it has, as Karpenter does.
func TestDoNotDisruptDurationIsExplainedOnThePod(t *testing.T) {
	f := newFixture(t, "0")
	f.node("n1", "large", "1")
	f.timed("guarded", "n1", "30m", 10*time.Minute)
	f.run()
	assert.Equal(t, []kube.Reason{kube.ReasonDoNotDisruptUntil}, f.events.reasons("guarded"))
	assert.Contains(t, f.events.message("guarded", kube.ReasonDoNotDisruptUntil), start.Add(20*time.Minute).UTC().Format(time.RFC3339))

	f.clock.Advance(5 * time.Minute)
	f.run()
	assert.Equal(t, 1, f.events.count("guarded", kube.ReasonDoNotDisruptUntil), "the same end is not announced every run")

	f.clock.Advance(16 * time.Minute)
	f.run()
	assert.Equal(t, 1, f.events.count("guarded", kube.ReasonDoNotDisruptGracePeriodElapsed))
	assert.Contains(t, f.events.message("guarded", kube.ReasonDoNotDisruptGracePeriodElapsed), "may be disrupted now")
	f.clock.Advance(time.Minute)
	f.run()
	assert.Equal(t, 1, f.events.count("guarded", kube.ReasonDoNotDisruptGracePeriodElapsed), "once")
}

// A protection that ended long ago is no news: a pod running for days is not told again after every
// cold start; "true" has no end to announce.
func TestOldOrUnendingProtectionIsNotAnnounced(t *testing.T) {
	f := newFixture(t, "0")
	f.node("n1", "large", "1")
	f.timed("old", "n1", "30m", 48*time.Hour)
	p := f.pod("forever", "n1", "100m")
	p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
	f.run()
	assert.Empty(t, f.events.reasons("old"))
	assert.Empty(t, f.events.reasons("forever"))
}

// One run publishes at most maxProtectionEvents of them; the rest are told by the next runs.
func TestProtectionEventsAreBoundedPerRun(t *testing.T) {
	f := newFixture(t, "0")
	f.node("n1", "large")
	f.node("n2", "large")
	for i := range maxProtectionEvents + 5 {
		f.timed(fmt.Sprintf("g%d", i), []string{"n1", "n2"}[i%2], "1h", time.Minute)
	}
	total := func() int {
		n := 0
		for i := range maxProtectionEvents + 5 {
			n += f.events.count(fmt.Sprintf("g%d", i), kube.ReasonDoNotDisruptUntil)
		}
		return n
	}
	f.run()
	assert.Equal(t, maxProtectionEvents, total())
	f.run()
	assert.Equal(t, maxProtectionEvents+5, total(), "the next run tells the rest, and nobody twice")
}
