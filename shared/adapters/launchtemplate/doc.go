// Package launchtemplate turns an EC2NodeClass, its resolution and a node's labels and taints into an EC2
// launch template, and keeps those templates in the account.
//
// It has a pure part and an adapter part. The pure part renders node user data per AMI family
// (UserData: AL2023 nodeadm NodeConfig in MIME, Bottlerocket TOML, AL2 bootstrap.sh in MIME, Custom
// passthrough) and the launch template data (Data); it takes plain structs, uses no clients and no clock.
// The adapter part (Provider) creates the templates through EC2: a template's name is
// "nodewright/<cluster>/<hash of its data>", so equal inputs share one template, a change makes a new one,
// and concurrent creators agree without coordination. Ensure marks each template it hands out as used
// (the nodewright.sh/last-used tag, at most every StampEvery), and DeleteUnused removes the cluster's
// templates that have not been made or marked for MinUnusedAge and that the caller does not keep.
//
// On an IPv6 cluster (Cluster.IPFamily, or an IPv6 service range) the user data carries the IPv6 service
// range and DNS address (AL2 adds --ip-family ipv6 and --service-ipv6-cidr) and the template gives the
// node's interface a primary IPv6 address, as Karpenter does.
//
// Every node registers with the taint karpenter.sh/unregistered:NoExecute (plus the NodePool's taints and
// startup taints) and the claim's labels; the lifecycle code removes the unregistered taint once the node
// has joined, as Karpenter does.
package launchtemplate
