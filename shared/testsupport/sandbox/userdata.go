package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
)

// bootConfig is what a node reads from its user data when it boots: the labels and taints it registers
// with and its pod density.
type bootConfig struct {
	Labels  map[string]string
	Taints  []corev1.Taint
	MaxPods *int32
}

// readUserData reads an AL2023 instance's user data the way nodeadm does: every NodeConfig part in
// order, later ones overriding earlier ones; labels from the kubelet's --node-labels flag.
func readUserData(encoded string) (bootConfig, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return bootConfig{}, fmt.Errorf("user data is not base64: %w", err)
	}
	if !launchtemplate.IsMIME(string(raw)) {
		return bootConfig{}, fmt.Errorf("user data is not a MIME document: only AL2023 nodes join the sandbox")
	}
	parts, err := launchtemplate.ParseMIME(string(raw))
	if err != nil {
		return bootConfig{}, err
	}
	bc := bootConfig{Labels: map[string]string{}}
	found := false
	for _, p := range parts {
		if !strings.HasPrefix(p.ContentType(), "application/node.eks.aws") {
			continue
		}
		var nc launchtemplate.NodeConfig
		if err := yaml.Unmarshal([]byte(p.Body), &nc); err != nil {
			return bootConfig{}, fmt.Errorf("NodeConfig: %w", err)
		}
		found = true
		if t, ok := nc.Spec.Kubelet.Config["registerWithTaints"]; ok {
			bc.Taints = nil
			if err := json.Unmarshal(t, &bc.Taints); err != nil {
				return bootConfig{}, fmt.Errorf("NodeConfig registerWithTaints: %w", err)
			}
		}
		if m, ok := nc.Spec.Kubelet.Config["maxPods"]; ok {
			var n int32
			if err := json.Unmarshal(m, &n); err != nil {
				return bootConfig{}, fmt.Errorf("NodeConfig maxPods: %w", err)
			}
			bc.MaxPods = &n
		}
		for _, f := range nc.Spec.Kubelet.Flags {
			list, ok := strings.CutPrefix(f, "--node-labels=")
			if !ok {
				continue
			}
			for _, kv := range strings.Split(list, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					bc.Labels[k] = v
				}
			}
		}
	}
	if !found {
		return bootConfig{}, fmt.Errorf("user data has no NodeConfig part")
	}
	return bc, nil
}
