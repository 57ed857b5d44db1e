package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestDedicatedTenancyFitsNoInstanceType: Nodewright launches shared tenancy only, so instance types carry
// instance-tenancy=default. A pod that selects dedicated instances gets no claim (it was given one
// labelled dedicated and launched on shared hardware); one that selects default gets a claim labelled so.
func TestDedicatedTenancyFitsNoInstanceType(t *testing.T) {
	for tenancy, fits := range map[string]bool{"dedicated": false, "default": true} {
		t.Run(tenancy, func(t *testing.T) {
			pod := Pod(PodOptions{Name: "p", CPU: "500m", NodeSelector: map[string]string{scheduling.LabelInstanceTenancy: tenancy}})
			plan, err := scheduling.Solve(scheduling.Input{Pods: []*corev1.Pod{pod}, NodePools: pools(NodePool("default")),
				InstanceTypes: RealisticInstanceTypes()})
			require.NoError(t, err)
			if !fits {
				assert.Empty(t, plan.NewClaims)
				assert.Len(t, plan.Unschedulable, 1)
				return
			}
			require.Len(t, plan.NewClaims, 1)
			assert.Empty(t, plan.Unschedulable)
		})
	}
}
