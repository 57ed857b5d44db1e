package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
)

// The groups that select a pod are found through the per-namespace index and the namespaceSelector
// groups, and come out as a scan of every group in creation order would give them.
func TestSelectingMatchesAScanOfEveryGroup(t *testing.T) {
	topo := newTopology(func(string) ([]string, map[string]float64) { return nil, nil })
	topo.nsLabels = map[string]labels.Set{"team-a": {"team": "a"}, "team-b": {"team": "b"}}
	app := func(v string) labels.Selector { return labels.SelectorFromSet(labels.Set{"app": v}) }
	specs := []groupSpec{
		{kind: kindSpread, key: LabelZone, namespaces: map[string]bool{"team-a": true}, selector: app("web")},
		{kind: kindAffinity, key: LabelHostname, nsSelector: labels.SelectorFromSet(labels.Set{"team": "b"}), selector: app("web")},
		{kind: kindSpread, key: LabelZone, namespaces: map[string]bool{"team-b": true}, selector: app("web")},
		{kind: kindAntiAffinity, key: LabelHostname, namespaces: map[string]bool{"team-a": true, "team-b": true}, selector: app("web")},
		{kind: kindAffinity, key: LabelHostname, nsSelector: labels.Everything(), selector: labels.Everything()},
		{kind: kindSpread, key: LabelZone, namespaces: map[string]bool{"team-a": true}, selector: app("db")},
		{kind: kindAntiAffinity, key: LabelHostname, selector: labels.Everything()}, // no namespace: selects nothing
	}
	for _, s := range specs {
		_, err := topo.group(s)
		require.NoError(t, err)
	}
	for _, ns := range []string{"team-a", "team-b", "other"} {
		for _, l := range []map[string]string{{"app": "web"}, {"app": "db"}, {}} {
			var want []*topoGroup
			for _, g := range topo.order {
				if g.matches(ns, l) {
					want = append(want, g)
				}
			}
			assert.Equal(t, want, topo.selecting(ns, l), "%s %v", ns, l)
		}
	}
	assert.Len(t, topo.selecting("team-a", map[string]string{"app": "web"}), 3)
}
