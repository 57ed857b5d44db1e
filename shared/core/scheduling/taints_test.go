package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestTolerates(t *testing.T) {
	gpu := corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	soft := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		strict      bool
		wantTaint   string
	}{
		{name: "no taints", strict: true},
		{name: "untolerated NoSchedule", taints: []corev1.Taint{gpu}, strict: true, wantTaint: "gpu"},
		{name: "tolerated by Equal", taints: []corev1.Taint{gpu}, strict: true, tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		{name: "wrong value", taints: []corev1.Taint{gpu}, strict: true, tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "false"}}, wantTaint: "gpu"},
		{name: "tolerated by Exists", taints: []corev1.Taint{gpu}, strict: true, tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}},
		{name: "tolerate everything", taints: []corev1.Taint{gpu, soft}, strict: true, tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{name: "PreferNoSchedule counts when strict", taints: []corev1.Taint{soft}, strict: true, wantTaint: "spot"},
		{name: "PreferNoSchedule ignored when relaxed", taints: []corev1.Taint{soft}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Tolerates(tt.tolerations, tt.taints, tt.strict)
			if tt.wantTaint == "" {
				assert.NoError(t, err)
				return
			}
			var u *UntoleratedError
			require.ErrorAs(t, err, &u)
			assert.Equal(t, tt.wantTaint, u.Taint.Key)
		})
	}
	assert.EqualError(t, &UntoleratedError{Taint: gpu}, "did not tolerate taint gpu=true:NoSchedule")
}

func TestSchedulingTaints(t *testing.T) {
	startup := corev1.Taint{Key: "cilium/agent-not-ready", Effect: corev1.TaintEffectNoExecute}
	dedicated := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	taints := []corev1.Taint{
		startup, dedicated,
		{Key: TaintNotReady, Effect: corev1.TaintEffectNoSchedule},
		{Key: TaintUnreachable, Effect: corev1.TaintEffectNoExecute},
		{Key: TaintCloudUninitalized, Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: TaintUnregistered, Effect: corev1.TaintEffectNoExecute},
		{Key: "readiness.k8s.io/net", Effect: corev1.TaintEffectNoSchedule},
	}
	assert.Equal(t, []corev1.Taint{dedicated}, SchedulingTaints(taints, []corev1.Taint{startup}, false))
	assert.Equal(t, taints, SchedulingTaints(taints, []corev1.Taint{startup}, true), "an initialized node keeps all its taints")
}

func TestIsEphemeralTaint(t *testing.T) {
	assert.True(t, IsEphemeralTaint(corev1.Taint{Key: TaintNotReady}))
	assert.True(t, IsEphemeralTaint(corev1.Taint{Key: "readiness.k8s.io/anything"}))
	assert.False(t, IsEphemeralTaint(corev1.Taint{Key: TaintDisrupted}))
}
