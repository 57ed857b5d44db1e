package scheduling_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata/")

// TestGoldenPlans compares full plans with testdata/<name>.golden.json. Run with -update after an
// intended change and review the diff.
func TestGoldenPlans(t *testing.T) {
	tests := []struct {
		name string
		in   scheduling.Input
	}{
		{
			name: "small-catalog-mixed",
			in: scheduling.Input{
				Pods: append(append(
					Pods(5, PodOptions{Name: "web", Owner: "web", CPU: "500m", Memory: "512Mi"}),
					Pods(3, PodOptions{Name: "db", Owner: "db", CPU: "2", Memory: "6Gi", Tolerations: []corev1.Toleration{toleration("dedicated")},
						NodeSelector: map[string]string{"workload": "db"}})...),
					Pod(PodOptions{Name: "arm", CPU: "1", NodeRequirements: []corev1.NodeSelectorRequirement{In(scheduling.LabelArch, "arm64")}}),
					Pod(PodOptions{Name: "too-big", CPU: "16"}),
				),
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "existing-1", CPU: "2", Memory: "4Gi"}), Initialized: true, NodePool: "default"}},
				NodePools: pools(
					NodePool("default", Weight(10)),
					NodePool("db", Labels(map[string]string{"workload": "db"}), Taint("dedicated", "db", corev1.TaintEffectNoSchedule),
						Requirement(scheduling.LabelCapacityType, scheduling.OpIn, "on-demand"), Limits("cpu", "16")),
				),
				DaemonSets:    []*appsv1.DaemonSet{DaemonSet("node-agent", "100m", "128Mi")},
				InstanceTypes: SmallCatalog(),
			},
		},
		{
			name: "karpenter-mix-topology",
			in: scheduling.Input{
				Pods:          KarpenterMix(40, 1),
				NodePools:     pools(NodePool("default")),
				InstanceTypes: InstanceTypes(16),
			},
		},
		{
			name: "realistic-deployments",
			in: scheduling.Input{
				Pods:          DeploymentPods(MixedWorkload(1)),
				NodePools:     pools(NodePool("default", Requirement(scheduling.LabelInstanceCategory, scheduling.OpIn, "c", "m", "r"))),
				DaemonSets:    []*appsv1.DaemonSet{DaemonSet("kube-proxy", "100m", "64Mi", corev1.Toleration{Operator: corev1.TolerationOpExists})},
				InstanceTypes: RealisticInstanceTypes(),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			got, err := json.MarshalIndent(plan, "", "  ")
			require.NoError(t, err)
			prepared, err := scheduling.Prepare(tt.in).Solve(tt.in.Pods, nil)
			require.NoError(t, err)
			gotPrepared, err := json.MarshalIndent(prepared, "", "  ")
			require.NoError(t, err)
			assert.Equal(t, string(got), string(gotPrepared), "Prepared.Solve gives Solve's plan")
			path := filepath.Join("testdata", tt.name+".golden.json")
			if *update {
				require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestGoldenPlans -update to create it")
			assert.JSONEq(t, string(want), string(got))
		})
	}
}
