package faults

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRuleValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{Rule{Target: "s3", Kind: Throttle}, "target"},
		{Rule{Target: AWS, Kind: "boom"}, "kind"},
		{Rule{Target: AWS, Kind: Latency}, "delay"},
		{Rule{Target: AWS, Kind: Throttle, Probability: 1.5}, "probability"},
		{Rule{Target: Kube, Kind: Throttle, Service: "EC2"}, "service"},
		{Rule{Target: AWS, Kind: Drop, Resource: "pods"}, "resource"},
		{Rule{Target: AWS, Kind: Drop, Limit: -1}, "limit"},
	} {
		_, err := New(1, Rule{Target: AWS, Kind: Drop}, tc.rule)
		require.Error(t, err, "%+v", tc.rule)
		assert.Contains(t, err.Error(), "fault rule 1: "+tc.want)
	}
}

func TestDecisionsRepeatWithTheSeed(t *testing.T) {
	rules := []Rule{{Target: AWS, Service: "EC2", Kind: Throttle, Probability: 0.1}, {Target: AWS, Kind: Drop, Probability: 0.05},
		{Target: Kube, Kind: ServerError, Probability: 0.1}}
	calls := []Call{{Target: AWS, Service: "EC2", Operation: "CreateFleet"}, {Target: AWS, Service: "SQS", Operation: "SendMessage"},
		{Target: Kube, Operation: "get", Resource: "nodes"}}
	run := func(seed uint64) []string {
		inj, err := New(seed, rules...)
		require.NoError(t, err)
		var got []string
		for n := 0; n < 3000; n++ {
			if r, ok := inj.Decide(calls[n%len(calls)]); ok {
				got = append(got, string(r.Kind)+"@"+itoa(n))
			}
		}
		return got
	}
	a, b, c := run(7), run(7), run(8)
	assert.Equal(t, a, b, "same seed, same faults")
	assert.NotEqual(t, a, c, "another seed, other faults")
	// 1000 calls each: EC2 ~ 1-(0.9*0.95) = 14.5 %, SQS 5 %, nodes 10 %: about 295 in all.
	assert.InDelta(t, 295, len(a), 60)
}

func TestStatsCountByTargetAndKind(t *testing.T) {
	inj, err := New(3, Rule{Target: Kube, Kind: Throttle, Probability: 1, Limit: 2}, Rule{Target: Kube, Kind: Latency, Probability: 1, Delay: time.Millisecond})
	require.NoError(t, err)
	for n := 0; n < 5; n++ {
		inj.Decide(Call{Target: Kube, Operation: "list", Resource: "pods"})
	}
	s := inj.Stats()
	assert.Equal(t, map[string]int{"kube/throttle": 2, "kube/latency": 3}, s.Injected)
	assert.Equal(t, 5, s.Total)
	assert.Equal(t, 2, s.Failing)
	assert.Equal(t, 0.4, s.FailingShare[Kube])
	inj.Disarm()
	_, ok := inj.Decide(Call{Target: Kube})
	assert.False(t, ok)
	assert.Equal(t, 5, inj.Stats().Calls[Kube], "disarmed calls are not counted")
}

func TestKubeRequestVerbAndResource(t *testing.T) {
	for _, tc := range []struct{ method, path, verb, resource string }{
		{http.MethodGet, "/api/v1/nodes", "list", "nodes"},
		{http.MethodGet, "/api/v1/nodes/n1", "get", "nodes"},
		{http.MethodGet, "/api/v1/namespaces/default/pods?watch=true", "watch", "pods"},
		{http.MethodPost, "/api/v1/namespaces/default/pods/p1/eviction", "create", "pods/eviction"},
		{http.MethodPatch, "/api/v1/nodes/n1/status", "patch", "nodes/status"},
		{http.MethodDelete, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/l1", "delete", "leases"},
		{http.MethodPut, "/api/v1/namespaces/ns1", "update", "namespaces"},
		{http.MethodGet, "/version", "get", ""},
	} {
		verb, res := kubeRequest(httptest.NewRequest(tc.method, tc.path, nil))
		assert.Equal(t, tc.verb+" "+tc.resource, verb+" "+res, "%s %s", tc.method, tc.path)
	}
}
