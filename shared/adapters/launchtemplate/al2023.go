package launchtemplate

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// nodeadm's NodeConfig, as far as Nodewright writes it (node.eks.aws/v1alpha1).
const (
	NodeConfigAPIVersion = "node.eks.aws/v1alpha1"
	NodeConfigKind       = "NodeConfig"
)

// NodeConfig is the nodeadm NodeConfig document Nodewright writes for AL2023 nodes.
type NodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       NodeConfigSpec `json:"spec"`
}

// NodeConfigSpec is the NodeConfig spec: the cluster to join and the kubelet's configuration.
type NodeConfigSpec struct {
	Cluster  NodeConfigCluster   `json:"cluster"`
	Instance *NodeConfigInstance `json:"instance,omitempty"`
	Kubelet  NodeConfigKubelet   `json:"kubelet"`
}

// NodeConfigInstance holds instance settings; Nodewright sets only the local storage strategy.
type NodeConfigInstance struct {
	LocalStorage NodeConfigLocalStorage `json:"localStorage"`
}

// NodeConfigLocalStorage says what nodeadm does with instance-store disks ("RAID0").
type NodeConfigLocalStorage struct {
	Strategy string `json:"strategy"`
}

// NodeConfigCluster says where the API server is and how to trust it.
type NodeConfigCluster struct {
	Name              string `json:"name"`
	APIServerEndpoint string `json:"apiServerEndpoint"`
	// CertificateAuthority is base64 in YAML (nodeadm decodes it into bytes).
	CertificateAuthority string `json:"certificateAuthority,omitempty"`
	CIDR                 string `json:"cidr"`
}

// NodeConfigKubelet holds KubeletConfiguration fields (merged over nodeadm's defaults) and extra flags.
type NodeConfigKubelet struct {
	Config map[string]json.RawMessage `json:"config,omitempty"`
	Flags  []string                   `json:"flags,omitempty"`
}

// nodeConfigHeader opens the generated NodeConfig so a reader of the instance's user data knows its origin.
const nodeConfigHeader = "# Written by Nodewright; later NodeConfig documents override earlier ones.\n"

// al2023UserData is a MIME document: the node class's user data parts, then Nodewright's NodeConfig.
// nodeadm merges every NodeConfig in order, so Nodewright's cluster details, kubelet configuration and
// taints win over the user's where both set them.
//
// Taints go in the kubelet configuration (registerWithTaints), as structured data nodeadm merges; labels
// go in the --node-labels flag, since the kubelet configuration file has no field for them.
func al2023UserData(o Options) (string, error) {
	if err := o.validate(true); err != nil {
		return "", err
	}
	cfg, err := o.nodeConfig()
	if err != nil {
		return "", err
	}
	doc, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding NodeConfig: %w", err)
	}
	return MergeUserData(o.UserData, guessAL2023, NewPart(ContentTypeNodeConfig, nodeConfigHeader+string(doc)))
}

func (o Options) nodeConfig() (NodeConfig, error) {
	config, err := o.rawKubelet()
	if err != nil {
		return NodeConfig{}, err
	}
	if config["registerWithTaints"], err = json.Marshal(o.registerTaints()); err != nil {
		return NodeConfig{}, fmt.Errorf("encoding taints: %w", err)
	}
	cfg := NodeConfig{
		APIVersion: NodeConfigAPIVersion,
		Kind:       NodeConfigKind,
		Spec: NodeConfigSpec{
			Cluster: NodeConfigCluster{
				Name:                 o.Cluster.Name,
				APIServerEndpoint:    o.Cluster.Endpoint,
				CertificateAuthority: o.Cluster.CABundle,
				CIDR:                 o.Cluster.ServiceCIDR,
			},
			Kubelet: NodeConfigKubelet{Config: config},
		},
	}
	if flag := o.labelsFlag(); flag != "" {
		cfg.Spec.Kubelet.Flags = []string{flag}
	}
	if o.raid0() {
		cfg.Spec.Instance = &NodeConfigInstance{LocalStorage: NodeConfigLocalStorage{Strategy: string(apis.InstanceStorePolicyRAID0)}}
	}
	return cfg, nil
}

// guessAL2023 names the content type of bare AL2023 user data: a YAML NodeConfig, or else a script.
func guessAL2023(text string) string {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(text), &head); err == nil &&
		head.Kind == NodeConfigKind && strings.HasPrefix(head.APIVersion, "node.eks.aws/") {
		return ContentTypeNodeConfig
	}
	return guessScript(text)
}
