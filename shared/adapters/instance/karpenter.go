package instance

// What Karpenter's garbage collection deletes, by the tags it finds (DESIGN decision 9). Nodewright's
// instances, volumes, network interfaces and launch templates must never match: Karpenter would
// terminate an instance that matches (it has no NodeClaim of Karpenter's) and delete a template.
//
// Instances: Karpenter lists the instances carrying both its node pool and node class tag keys and its
// cluster tag (v1.1 and later: eks:eks-cluster-name=<cluster>; v1.0: the kubernetes.io/cluster/<cluster>
// key), and terminates those without a NodeClaim. Nodewright's instances carry karpenter.sh/nodepool (for
// cost allocation reports) and kubernetes.io/cluster/<cluster> (for the cloud provider), so the one key
// that must never be added is karpenter.k8s.aws/ec2nodeclass, and eks:eks-cluster-name stays off too.
//
// Launch templates: Karpenter deletes the templates tagged eks:eks-cluster-name=<cluster> (v1.0:
// karpenter.k8s.aws/cluster=<cluster>) that it does not know.

// KarpenterCollectsInstance reports whether Karpenter's instance garbage collection (v1.0 or later) of
// cluster lists an instance with tags as its own: karpenter.sh/nodepool and karpenter.k8s.aws/ec2nodeclass
// together with eks:eks-cluster-name=<cluster> or the kubernetes.io/cluster/<cluster> key.
func KarpenterCollectsInstance(tags map[string]string, cluster string) bool {
	_, pool := tags[KarpenterTagNodePool]
	_, class := tags[KarpenterTagNodeClass]
	_, v10 := tags[ClusterTagKey(cluster)]
	return pool && class && (tags[TagEKSClusterName] == cluster || v10)
}

// KarpenterTagTemplateCluster is the cluster tag Karpenter v1.0 puts on its launch templates.
const KarpenterTagTemplateCluster = "karpenter.k8s.aws/cluster"

// NeverSetTagKeys are the tag keys of Karpenter's that Nodewright never puts on anything it creates: the
// node class key that would complete the garbage collection combination on an instance, the cluster keys
// Karpenter's clean-up lists instances and launch templates by, and Karpenter's claim key. infra's IAM
// conditions refuse a launch or tag-on-create that carries one of them.
var NeverSetTagKeys = []string{KarpenterTagNodeClass, KarpenterTagNodeClaim, TagEKSClusterName, KarpenterTagTemplateCluster}

// KarpenterOwnedTagKeys are the tag keys by which Karpenter tells its own resources. Nodewright never
// copies them from an EC2NodeClass's tags (its validation refuses most of them already); it sets only
// karpenter.sh/nodepool itself, to the claim's NodePool.
var KarpenterOwnedTagKeys = append([]string{KarpenterTagNodePool}, NeverSetTagKeys...)

// KarpenterDeletesTemplate reports whether Karpenter's launch template clean-up (v1.0 or later) of cluster
// deletes a launch template with tags: tagged eks:eks-cluster-name=<cluster> or (v1.0)
// karpenter.k8s.aws/cluster=<cluster>.
func KarpenterDeletesTemplate(tags map[string]string, cluster string) bool {
	return tags[TagEKSClusterName] == cluster || tags[KarpenterTagTemplateCluster] == cluster
}
