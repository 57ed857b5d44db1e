package provisioning

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// teamsPool is a NodePool whose team label is chosen by the pods (Karpenter's documented pattern).
func teamsPool(requirement string) string {
	return `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: teams}
spec:
  template:
    metadata:
      annotations: {example.com/owner: platform}
    spec:
      requirements:
        - ` + requirement + nodeClassRef
}

// TestRunLaunchesOnceForANarrowedLabel: a pod selecting team=a on a pool that lets it choose (Exists,
// In [a,b]) gets one claim labelled team=a, and the runs after it see that claim in flight instead of
// launching again.
func TestRunLaunchesOnceForANarrowedLabel(t *testing.T) {
	cases := []struct{ name, requirement string }{
		{"Exists", "{key: team, operator: Exists}"},
		{"In two values", "{key: team, operator: In, values: [a, b]}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("web", map[string]string{"team": "a"}))})
			_, err := w.store.ApplyConfig(ctx, storedConfig(t, teamsPool(tc.requirement)), false)
			require.NoError(t, err)

			launched := 0
			for run := 1; run <= 5; run++ {
				rep, err := w.p.Run(ctx, fmt.Sprintf("run-%d", run))
				require.NoError(t, err)
				assert.Empty(t, rep.Errors)
				assert.Empty(t, rep.Unschedulable, "run %d", run)
				launched += len(rep.Claims)
				if run > 1 {
					assert.Equal(t, 1, rep.InFlight, "run %d counts the first claim", run)
				}
			}
			assert.Equal(t, 1, launched, "exactly one claim over five runs")
			assert.Len(t, w.ec2.requests, 1, "exactly one CreateFleet")

			claims, err := w.store.ListClaims(ctx)
			require.NoError(t, err)
			require.Len(t, claims, 1)
			c := claims[0]
			assert.Equal(t, state.Launched, c.Lifecycle)
			for k, v := range map[string]string{
				"team": "a", "karpenter.sh/nodepool": "teams", "karpenter.k8s.aws/ec2nodeclass": "default",
				"karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-family": "m5",
				"karpenter.k8s.aws/instance-generation": "5", "karpenter.k8s.aws/instance-size": "xlarge",
				"karpenter.k8s.aws/instance-cpu": "4", "karpenter.k8s.aws/instance-memory": "16384",
				"karpenter.k8s.aws/instance-hypervisor": "nitro", "kubernetes.io/arch": "amd64",
				"node.kubernetes.io/instance-type": "m5.xlarge", "topology.kubernetes.io/zone": "us-east-1a",
				"karpenter.sh/capacity-type": "spot",
			} {
				assert.Equal(t, v, c.Labels[k], k)
			}

			made := w.p.deps.Templates.(*fakeTemplates).made
			require.NotEmpty(t, made)
			for _, tmpl := range made {
				assert.Equal(t, "a", tmpl.Options.Labels["team"], "the kubelet registers with the narrowed label")
				assert.NotContains(t, tmpl.Options.Labels, "karpenter.k8s.aws/instance-family",
					"instance-type labels differ between a fleet's overrides; registration sets them")
			}
		})
	}
}
