package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestVolumeTopology(t *testing.T) {
	wffc, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	pod := func(name string, claims ...string) *corev1.Pod {
		return WithClaims(Pod(PodOptions{Name: name, CPU: "1", Memory: "1Gi"}), claims...)
	}
	// Three replicas of one StatefulSet, each with its own volume.
	replicas := func(claims ...string) []*corev1.Pod {
		var out []*corev1.Pod
		for i, c := range claims {
			out = append(out, WithClaims(Pod(PodOptions{Name: "db-" + string(rune('0'+i)), Owner: "db", CPU: "1", Memory: "1Gi"}), c))
		}
		return out
	}
	deleting := BoundClaim("data", "pv-b")
	deleting.DeletionTimestamp = &metav1.Time{}
	lost := BoundClaim("data", "pv-b")
	lost.Status.Phase = corev1.ClaimLost
	unfinished := BoundClaim("data", "pv-b")
	unfinished.Annotations = nil
	deletedVolume := ZonalVolume("pv-b", LabelZoneKey, []string{"us-west-2b"})
	deletedVolume.DeletionTimestamp = &metav1.Time{}
	local := ZonalVolume("pv-local", "kubernetes.io/hostname", []string{"node-1"})
	ephemeral := Pod(PodOptions{Name: "scratch", CPU: "1", Memory: "1Gi"})
	class := "zonal-b"
	ephemeral.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class}}}}}}
	defaultClass := StorageClass("gp3", wffc, "us-west-2b")
	defaultClass.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	noClass := PendingClaim("data", "")
	noClass.Spec.StorageClassName = nil

	tests := []struct {
		name string
		in   scheduling.Input
		want expect
	}{
		{
			name: "a bound volume's EBS CSI zone places the pod in that zone",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv-b")},
				PersistentVolumes:      []*corev1.PersistentVolume{ZonalVolume("pv-b", "topology.ebs.csi.aws.com/zone", []string{"us-west-2b"})}},
			want: expect{claims: 1, instanceTypes: []string{"small"}, zones: []string{"us-west-2b"}},
		},
		{
			name: "replicas of one controller follow their own volumes' zones",
			in: scheduling.Input{Pods: replicas("data-0", "data-1", "data-2"),
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data-0", "pv-a"), BoundClaim("data-1", "pv-b"), BoundClaim("data-2", "pv-a2")},
				PersistentVolumes: []*corev1.PersistentVolume{ZonalVolume("pv-a", LabelZoneKey, []string{"us-west-2a"}),
					ZonalVolume("pv-b", LabelZoneKey, []string{"us-west-2b"}), ZonalVolume("pv-a2", LabelZoneKey, []string{"us-west-2a"})}},
			want: expect{claims: 2, zones: []string{"us-west-2a", "us-west-2b"}, podsPerClaim: []int{2, 1}},
		},
		{
			name: "a volume's OR-ed node affinity terms are alternatives",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv")},
				// us-west-2c has no offering in the small catalog, so the second term is taken.
				PersistentVolumes: []*corev1.PersistentVolume{ZonalVolume("pv", LabelZoneKey, []string{"us-west-2c"}, []string{"us-west-2b"})}},
			want: expect{claims: 1, zones: []string{"us-west-2b"}},
		},
		{
			name: "a local volume's hostname affinity does not constrain a new node",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv-local")},
				PersistentVolumes:      []*corev1.PersistentVolume{local}},
			want: expect{claims: 1, zones: []string{"us-west-2a"}},
		},
		{
			name: "an unbound claim of a WaitForFirstConsumer class takes the class's allowed topologies",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{PendingClaim("data", "zonal-b")},
				StorageClasses:         []*storagev1.StorageClass{StorageClass("zonal-b", wffc, "us-west-2b")}},
			want: expect{claims: 1, zones: []string{"us-west-2b"}},
		},
		{
			name: "a WaitForFirstConsumer class without allowed topologies does not constrain",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{PendingClaim("data", "anywhere")},
				StorageClasses:         []*storagev1.StorageClass{StorageClass("anywhere", wffc)}},
			want: expect{claims: 1, zones: []string{"us-west-2a"}},
		},
		{
			name: "a claim without a class name uses the default class",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{noClass},
				StorageClasses:         []*storagev1.StorageClass{defaultClass}},
			want: expect{claims: 1, zones: []string{"us-west-2b"}},
		},
		{
			name: "a generic ephemeral volume not created yet uses its template's class",
			in: scheduling.Input{Pods: []*corev1.Pod{ephemeral},
				StorageClasses: []*storagev1.StorageClass{StorageClass("zonal-b", wffc, "us-west-2b")}},
			want: expect{claims: 1, zones: []string{"us-west-2b"}},
		},
		{
			name: "an existing node outside the volume's zone is passed over",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n-a", CPU: "4", Memory: "8Gi", Labels: map[string]string{LabelZoneKey: "us-west-2a"}}), Initialized: true},
					{Node: Node(NodeOptions{Name: "n-b", CPU: "4", Memory: "8Gi", Labels: map[string]string{LabelZoneKey: "us-west-2b"}}), Initialized: true}},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv-b")},
				PersistentVolumes:      []*corev1.PersistentVolume{ZonalVolume("pv-b", LabelZoneKey, []string{"us-west-2b"})}},
			want: expect{existing: map[string][]string{"n-b": {"default/p"}}},
		},
		{
			name: "a node selector for another zone than the volume's is a requirement conflict",
			in: scheduling.Input{Pods: []*corev1.Pod{WithClaims(Pod(PodOptions{Name: "p", CPU: "1", NodeSelector: map[string]string{LabelZoneKey: "us-west-2a"}}), "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv-b")},
				PersistentVolumes:      []*corev1.PersistentVolume{ZonalVolume("pv-b", LabelZoneKey, []string{"us-west-2b"})}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintRequirement},
				reasonHas: []string{"the pod's node selection rules out where its volumes can attach (topology.kubernetes.io/zone In [us-west-2b])"}},
		},
		{
			name: "a missing claim",
			in:   scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{`volume "data": persistentvolumeclaim default/data not found`}},
		},
		{
			name: "a missing storage class",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{PendingClaim("data", "gone")}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"storage class gone not found"}},
		},
		{
			name: "no default class for a claim without a class name",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{noClass}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"no default storage class"}},
		},
		{
			name: "an unbound claim of an Immediate class waits for its volume",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{PendingClaim("data", "now")},
				StorageClasses:         []*storagev1.StorageClass{StorageClass("now", immediate)}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"storage class now binds immediately"}},
		},
		{
			name: "a missing bound volume",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv-b")}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"persistent volume pv-b of claim default/data not found"}},
		},
		{
			name: "a deleting volume",
			in: scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")},
				PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{BoundClaim("data", "pv-b")},
				PersistentVolumes:      []*corev1.PersistentVolume{deletedVolume}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"persistent volume pv-b of claim default/data is being deleted"}},
		},
		{
			name: "a deleting claim",
			in:   scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")}, PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{deleting}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"is being deleted"}},
		},
		{
			name: "a lost claim",
			in:   scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")}, PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{lost}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"lost its persistent volume"}},
		},
		{
			name: "a claim whose binding is not complete",
			in:   scheduling.Input{Pods: []*corev1.Pod{pod("p", "data")}, PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{unfinished}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintVolume},
				reasonHas: []string{"not fully bound"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.NodePools = pools(NodePool("default"))
			tt.in.InstanceTypes = SmallCatalog()
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			checkPlan(t, plan, tt.want)
		})
	}
}

func TestVolumeTopologyWithZoneSpread(t *testing.T) {
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: LabelZoneKey, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	replicas := func(zones ...string) scheduling.Input {
		in := scheduling.Input{NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog()}
		for i, z := range zones {
			n := string(rune('0' + i))
			in.Pods = append(in.Pods, WithClaims(Pod(PodOptions{Name: "db-" + n, Owner: "db", CPU: "1500m", Memory: "1Gi",
				Labels: map[string]string{"app": "db"}, Spread: spread}), "data-"+n))
			in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, BoundClaim("data-"+n, "pv-"+n))
			in.PersistentVolumes = append(in.PersistentVolumes, ZonalVolume("pv-"+n, LabelZoneKey, []string{z}))
		}
		return in
	}
	t.Run("volumes in both zones keep the skew", func(t *testing.T) {
		plan, err := scheduling.Solve(replicas("us-west-2a", "us-west-2b", "us-west-2b"))
		require.NoError(t, err)
		checkPlan(t, plan, expect{claims: 2, zones: []string{"us-west-2a", "us-west-2b"}, podsPerClaim: []int{1, 2}})
	})
	t.Run("volumes all in one zone allow only maxSkew pods there", func(t *testing.T) {
		plan, err := scheduling.Solve(replicas("us-west-2a", "us-west-2a"))
		require.NoError(t, err)
		// Spread domains are every zone the pods could use without their volumes: a second pod in
		// us-west-2a would skew it by 2 over the empty us-west-2b.
		checkPlan(t, plan, expect{claims: 1, zones: []string{"us-west-2a"},
			unschedulable: map[string]scheduling.Constraint{"default/db-1": scheduling.ConstraintTopology}})
	})
}

// LabelZoneKey is the zone label, shortened for the table.
const LabelZoneKey = scheduling.LabelZone
