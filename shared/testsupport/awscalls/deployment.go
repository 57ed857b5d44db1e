package awscalls

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Deployment is what a recording ran against, as the CDK app would deploy it: the cluster and its
// NodePool and EC2NodeClass YAML (which shape the roles), and the physical names of the resources the CDK
// app would create, so the IAM proof can synthesize the same stack and bind its resources to them.
type Deployment struct {
	Cluster string `json:"cluster"`
	Account string `json:"account"`
	Table   string `json:"table"`
	// Queues maps the CDK app's queue ids (Provisioning, Interruption, Termination, DisruptionWake) to the
	// names of the queues standing in for them; a deployment without queues may leave it empty.
	Queues map[string]string `json:"queues,omitempty"`
	// Manifests is the NodePool and EC2NodeClass YAML the stack is synthesized from.
	Manifests string `json:"manifests"`
	// WebhookSecret is the name of the secret standing in for the webhook token's (Secrets Manager
	// appends a random suffix to its ARN); empty when there is none.
	WebhookSecret string `json:"webhookSecret,omitempty"`
}

// ID names the deployment by its content, so every test of one world shares one.
func (d Deployment) ID() string {
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// save writes the deployment next to the recordings, once per content.
func (d Deployment) save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "deployment-"+d.ID()+".json")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(dir, "deployment-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path) // whole or absent, for parallel test processes
}

// ReadDeployments reads the deployments of the recordings in dir, by ID.
func ReadDeployments(dir string) (map[string]Deployment, error) {
	files, err := filepath.Glob(filepath.Join(dir, "deployment-*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]Deployment{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var d Deployment
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "deployment-"), ".json")
		out[id] = d
	}
	return out, nil
}

// SampleManifests is a NodePool and EC2NodeClass for the Deployment of a test whose configuration does
// not matter to the roles it exercises (only the EC2NodeClass's role shapes the launching roles).
const SampleManifests = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`
