package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

const ebsDriver = "ebs.csi.aws.com"

// attachCluster is one initialized node, n-1, with room for many pods, running a pod per entry of
// bound (each with the claims listed), and every claim named bound to a volume of the EBS CSI
// driver. The caller adds CSINodes and pending pods.
func attachCluster(bound ...[]string) scheduling.Input {
	in := scheduling.Input{NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog()}
	claims := map[string]bool{}
	var pods []*corev1.Pod
	for i, cs := range bound {
		pods = append(pods, WithClaims(Pod(PodOptions{Name: "bound-" + string(rune('a'+i)), CPU: "100m", NodeName: "n-1"}), cs...))
		for _, c := range cs {
			claims[c] = true
		}
	}
	for c := range claims {
		in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, BoundClaim(c, "pv-"+c))
		in.PersistentVolumes = append(in.PersistentVolumes, CSIVolume("pv-"+c, ebsDriver))
	}
	in.Nodes = []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n-1", CPU: "8", Memory: "32Gi"}), Pods: pods, Initialized: true}}
	return in
}

// withPending adds a pending pod with the claims, each bound to an EBS CSI volume unless the input
// already has it.
func withPending(in scheduling.Input, name string, claims ...string) scheduling.Input {
	in.Pods = append(in.Pods, WithClaims(Pod(PodOptions{Name: name, Owner: "db", CPU: "100m", Memory: "128Mi"}), claims...))
	for _, c := range claims {
		known := false
		for _, pvc := range in.PersistentVolumeClaims {
			known = known || pvc.Name == c
		}
		if !known {
			in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, BoundClaim(c, "pv-"+c))
			in.PersistentVolumes = append(in.PersistentVolumes, CSIVolume("pv-"+c, ebsDriver))
		}
	}
	return in
}

// solveBoth checks the plan of Solve and of Prepared.Solve.
func solveBoth(t *testing.T, in scheduling.Input, want expect) {
	t.Helper()
	plan, err := scheduling.Solve(in)
	require.NoError(t, err)
	checkPlan(t, plan, want)
	prepared, err := scheduling.Prepare(in).Solve(in.Pods, nil)
	require.NoError(t, err)
	checkPlan(t, prepared, want)
}

func TestVolumeLimitFullNodeTakesNoNewVolume(t *testing.T) {
	in := withPending(attachCluster([]string{"a"}, []string{"b"}), "p", "p-data")
	in.Pods = append(in.Pods, Pod(PodOptions{Name: "plain", CPU: "100m"}))
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
	// The node has room for both pods, but its two EBS attachments are taken: the pod with a volume
	// goes to a new claim, the pod without one to the node.
	solveBoth(t, in, expect{claims: 1, podsPerClaim: []int{1}, existing: map[string][]string{"n-1": {"default/plain"}}})
}

func TestVolumeLimitNodeBelowLimitTakesThePod(t *testing.T) {
	in := withPending(attachCluster([]string{"a"}, []string{"b"}), "p", "p-data")
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 3})}
	solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p"}}})
}

func TestVolumeLimitSharedClaimCountsOnce(t *testing.T) {
	// Two bound pods share one claim: one attachment of the two allowed.
	in := withPending(attachCluster([]string{"shared"}, []string{"shared"}), "p", "p-data")
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
	solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p"}}})
}

func TestVolumeLimitAttachedVolumeAddsNothing(t *testing.T) {
	// The node is at its limit, but the pending pod's volume is one of those already attached.
	in := withPending(attachCluster([]string{"a"}, []string{"b"}), "p", "a")
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
	solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p"}}})
}

func TestVolumeLimitCountsPodsPlacedInTheSolve(t *testing.T) {
	// One attachment left: the first of two replicas takes it, the second needs a new node.
	in := withPending(attachCluster([]string{"a"}), "p-0", "p-0-data")
	in = withPending(in, "p-1", "p-1-data")
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
	solveBoth(t, in, expect{claims: 1, podsPerClaim: []int{1}, existing: map[string][]string{"n-1": {"default/p-0"}}})
}

func TestVolumeLimitPendingPodsSharingAClaim(t *testing.T) {
	// One attachment left, two pending pods on one new claim: both fit, the claim counts once.
	in := withPending(attachCluster([]string{"a"}), "p-0", "shared")
	in = withPending(in, "p-1", "shared")
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
	solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p-0", "default/p-1"}}})
}

func TestVolumeLimitInTreeEBSIsTranslated(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	inTree := StorageClass("in-tree", wffc)
	inTree.Provisioner = "kubernetes.io/aws-ebs"
	in := attachCluster([]string{"a"})
	// bound-a's volume is an in-tree EBS volume; bound-b's claim is of an in-tree class whose volume
	// names no source the solver knows.
	in.PersistentVolumes[0].Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{
		AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-a"}}
	b := BoundClaim("b", "pv-b")
	b.Spec.StorageClassName = &inTree.Name
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, b, PendingClaim("p-data", "in-tree"))
	in.PersistentVolumes = append(in.PersistentVolumes, CSIVolume("pv-b", ""))
	in.PersistentVolumes[1].Spec.CSI = nil
	in.StorageClasses = []*storagev1.StorageClass{inTree}
	in.Nodes[0].Pods = append(in.Nodes[0].Pods, WithClaims(Pod(PodOptions{Name: "bound-b", CPU: "100m", NodeName: "n-1"}), "b"))
	in = withPending(in, "p", "p-data")

	t.Run("the node's in-tree volumes fill its EBS CSI limit", func(t *testing.T) {
		in := in
		in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
		solveBoth(t, in, expect{claims: 1, podsPerClaim: []int{1}})
	})
	t.Run("the pending pod's in-tree class counts against the limit", func(t *testing.T) {
		in := in
		in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 3})}
		solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p"}}})
		in.Pods = append(in.Pods, WithClaims(Pod(PodOptions{Name: "q", CPU: "100m"}), "q-data"))
		in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, PendingClaim("q-data", "in-tree"))
		solveBoth(t, in, expect{claims: 1, podsPerClaim: []int{1}, existing: map[string][]string{"n-1": {"default/p"}}})
	})
}

func TestVolumeLimitWithoutCount(t *testing.T) {
	in := withPending(attachCluster([]string{"a"}, []string{"b"}), "p", "p-data")
	t.Run("a node without a CSINode has no limit", func(t *testing.T) {
		solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p"}}})
	})
	t.Run("a CSINode without a count for the driver sets no limit for it", func(t *testing.T) {
		in := in
		in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{"efs.csi.aws.com": 1}), CSINode("n-2", map[string]int32{ebsDriver: 1})}
		solveBoth(t, in, expect{existing: map[string][]string{"n-1": {"default/p"}}})
	})
}

func TestVolumeLimitReason(t *testing.T) {
	in := withPending(attachCluster([]string{"a"}, []string{"b"}), "p", "p-data")
	in.CSINodes = []*storagev1.CSINode{CSINode("n-1", map[string]int32{ebsDriver: 2})}
	in.NodePools = nil
	solveBoth(t, in, expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintNoNodePool},
		reasonHas: []string{"1 volumelimit (e.g. node n-1: CSI driver ebs.csi.aws.com allows 2 volumes, 2 attached)"}})
}
