// Package lifecycle decides how a launched claim's Node joins the cluster (reference §d.2, §d.3), as pure
// functions over the claim's expectations and the Nodes: registration (find the Node by providerID,
// bring it the NodePool's labels and taints, lift karpenter.sh/unregistered, label it registered) and
// initialization (Ready, startup and known ephemeral taints gone, every requested extended resource
// present; then label it initialized). The lifecycle function applies the patch with the Kubernetes
// adapter and records the claim's new state.
package lifecycle
