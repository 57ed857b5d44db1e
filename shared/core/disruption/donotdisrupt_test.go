package disruption_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

func TestDoNotDisrupt(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-20 * time.Minute))
	cases := []struct {
		name      string
		value     *string
		start     *metav1.Time
		protected bool
		until     time.Time
		invalid   string
	}{
		{name: "no annotation"},
		{name: "true", value: new("true"), start: &started, protected: true},
		{name: "false", value: new("false"), start: &started},
		{name: "a duration not over yet", value: new("30m"), start: &started, protected: true, until: now.Add(10 * time.Minute)},
		{name: "a duration over", value: new("15m"), start: &started, until: now.Add(-5 * time.Minute)},
		{name: "a duration of a pod not started", value: new("30m"), protected: true},
		{name: "a typo", value: new("ture"), start: &started, invalid: `value "ture" is neither "true" nor a positive duration`},
		{name: "a duration without unit", value: new("30"), start: &started, invalid: `value "30"`},
		{name: "a negative duration", value: new("-5m"), start: &started, invalid: `value "-5m"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{}}}
			if tc.value != nil {
				pod.Annotations[disruption.AnnotationDoNotDisrupt] = *tc.value
			}
			pod.Status.StartTime = tc.start
			protected, until, err := disruption.DoNotDisrupt(pod, now)
			assert.Equal(t, tc.protected, protected)
			assert.Equal(t, tc.until, until)
			if tc.invalid == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.invalid)
			}
		})
	}
}
