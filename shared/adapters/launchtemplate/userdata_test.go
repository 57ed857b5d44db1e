package launchtemplate

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<name>, or rewrites the file under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test -update")
	assert.Equal(t, string(want), got, "output differs from %s; run go test -update if the change is intended", path)
}

var testCA = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n"))

func ptr[T any](v T) *T { return &v }

// testOptions are the inputs of a node of NodePool "general" and EC2NodeClass "default".
func testOptions(family string) Options {
	return Options{
		Family: family,
		Cluster: Cluster{Name: "prod", Endpoint: "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com", CABundle: testCA,
			ServiceCIDR: "10.100.0.0/16", DNSIP: "10.100.0.10"},
		Labels: map[string]string{
			apis.NodePoolLabelKey:         "general",
			apis.NodeClassLabelKey:        "default",
			apis.CapacityTypeLabelKey:     "spot",
			"team":                        "payments",
			"node.kubernetes.io/role":     "worker", // kubelet may not set it: left out
			"topology.kubernetes.io/zone": "us-east-1a",
		},
		Taints:        []corev1.Taint{{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}},
		StartupTaints: []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Effect: corev1.TaintEffectNoExecute}},
		MaxPods:       ptr(int32(58)),
	}
}

func kubelet(t *testing.T, fields map[string]any) apis.KubeletConfiguration {
	t.Helper()
	kc := apis.KubeletConfiguration{}
	for k, v := range fields {
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		kc[k] = raw
	}
	return kc
}

func fullKubelet(t *testing.T) apis.KubeletConfiguration {
	return kubelet(t, map[string]any{
		apis.KubeletClusterDNS:                  []string{"169.254.20.10"},
		apis.KubeletMaxPods:                     110,
		apis.KubeletPodsPerCore:                 10,
		apis.KubeletKubeReserved:                map[string]string{"cpu": "100m", "memory": "512Mi"},
		apis.KubeletSystemReserved:              map[string]string{"cpu": "50m", "ephemeral-storage": "1Gi"},
		apis.KubeletEvictionHard:                map[string]string{"memory.available": "5%", "nodefs.available": "10%"},
		apis.KubeletEvictionSoft:                map[string]string{"memory.available": "10%"},
		apis.KubeletEvictionSoftGracePeriod:     map[string]string{"memory.available": "1m30s"},
		apis.KubeletEvictionMaxPodGracePeriod:   60,
		apis.KubeletImageGCHighThresholdPercent: 85,
		apis.KubeletImageGCLowThresholdPercent:  70,
		apis.KubeletCPUCFSQuota:                 false,
	})
}

const (
	userShell = "#!/bin/bash\necho \"hello from the node class\"\n"
	userMIME  = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s
      maxPods: 20
--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo "user script"
--BOUNDARY--
`
	userNodeConfig = `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s
`
	userBottlerocket = `# the node class's own settings
[settings.kubernetes]
cluster-name = "someone-else"
max-pods = 7
node-taints = { "user-taint" = ["x:NoSchedule"] }
allowed-unsafe-sysctls = ["net.core.somaxconn"]

[settings.kubernetes.node-labels]
"karpenter.sh/nodepool" = "user-wins?"
"user-label" = 'kept'

[settings.host-containers.admin]
enabled = true

[settings.bootstrap-commands.k8s-ephemeral-storage]
commands = [["apiclient", "ephemeral-storage", "init"], ["apiclient", "ephemeral-storage", "bind"]]
essential = true
mode = "always"
`
)

func TestUserDataGolden(t *testing.T) {
	tests := []struct {
		name   string
		family string
		modify func(*Options)
	}{
		{"al2023.golden", apis.AMIFamilyAL2023, nil},
		{"al2023_kubelet.golden", apis.AMIFamilyAL2023, func(o *Options) { o.KubeletConfig = fullKubelet(t); o.MaxPods = nil }},
		{"al2023_user_shell.golden", apis.AMIFamilyAL2023, func(o *Options) { o.UserData = userShell }},
		{"al2023_user_mime.golden", apis.AMIFamilyAL2023, func(o *Options) { o.UserData = userMIME }},
		{"al2023_user_nodeconfig.golden", apis.AMIFamilyAL2023, func(o *Options) { o.UserData = userNodeConfig }},
		{"al2023_no_labels_no_taints.golden", apis.AMIFamilyAL2023, func(o *Options) {
			o.Labels, o.Taints, o.StartupTaints, o.MaxPods = nil, nil, nil, nil
		}},
		{"al2023_raid0.golden", apis.AMIFamilyAL2023, func(o *Options) { o.InstanceStorePolicy = ptr(apis.InstanceStorePolicyRAID0) }},
		{"bottlerocket.golden", apis.AMIFamilyBottlerocket, nil},
		{"bottlerocket_raid0.golden", apis.AMIFamilyBottlerocket, func(o *Options) { o.InstanceStorePolicy = ptr(apis.InstanceStorePolicyRAID0) }},
		{"bottlerocket_kubelet.golden", apis.AMIFamilyBottlerocket, func(o *Options) { o.KubeletConfig = fullKubelet(t); o.MaxPods = nil }},
		{"bottlerocket_user.golden", apis.AMIFamilyBottlerocket, func(o *Options) { o.UserData = userBottlerocket }},
		{"al2.golden", apis.AMIFamilyAL2, nil},
		{"al2_kubelet.golden", apis.AMIFamilyAL2, func(o *Options) { o.KubeletConfig = fullKubelet(t); o.MaxPods = nil }},
		{"al2_user_shell.golden", apis.AMIFamilyAL2, func(o *Options) { o.UserData = userShell }},
		{"al2_user_mime.golden", apis.AMIFamilyAL2, func(o *Options) { o.UserData = userMIME }},
		{"al2_raid0.golden", apis.AMIFamilyAL2, func(o *Options) { o.InstanceStorePolicy = ptr(apis.InstanceStorePolicyRAID0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(tt.family)
			if tt.modify != nil {
				tt.modify(&o)
			}
			got, err := UserData(o)
			require.NoError(t, err)
			golden(t, tt.name, got)
			again, err := UserData(o)
			require.NoError(t, err)
			assert.Equal(t, got, again, "user data must be deterministic")
		})
	}
}

func TestUserDataCustomIsUnchanged(t *testing.T) {
	o := testOptions(apis.AMIFamilyCustom)
	o.UserData = "anything at all\x00"
	got, err := UserData(o)
	require.NoError(t, err)
	assert.Equal(t, o.UserData, got)
}

func TestUserDataUnsupportedFamilies(t *testing.T) {
	for _, family := range []string{apis.AMIFamilyWindows2019, apis.AMIFamilyWindows2022, apis.AMIFamilyWindows2025, "Plan9"} {
		t.Run(family, func(t *testing.T) {
			_, err := UserData(testOptions(family))
			assert.ErrorIs(t, err, ErrUnsupportedFamily)
		})
	}
}

func TestUserDataRejectsBadInputs(t *testing.T) {
	tests := map[string]func(*Options){
		"no cluster name":         func(o *Options) { o.Cluster.Name = "" },
		"no CA for AL2023":        func(o *Options) { o.Cluster.CABundle = "" },
		"quote in endpoint":       func(o *Options) { o.Cluster.Endpoint = "https://x' ; rm -rf /" },
		"CA not base64":           func(o *Options) { o.Cluster.CABundle = "%%%" },
		"bad label key":           func(o *Options) { o.Labels = map[string]string{"a b": "c"} },
		"label value with quote":  func(o *Options) { o.Labels = map[string]string{"a": "x'y"} },
		"bad taint effect":        func(o *Options) { o.Taints = []corev1.Taint{{Key: "a", Effect: "Sometimes"}} },
		"malformed kubelet":       func(o *Options) { o.KubeletConfig = apis.KubeletConfiguration{"maxPods": json.RawMessage(`"x"`)} },
		"malformed user MIME":     func(o *Options) { o.UserData = "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\nbody" },
		"service CIDR not a CIDR": func(o *Options) { o.Cluster.ServiceCIDR = "10.0.0.0" },
	}
	for name, modify := range tests {
		t.Run(name, func(t *testing.T) {
			o := testOptions(apis.AMIFamilyAL2023)
			modify(&o)
			_, err := UserData(o)
			assert.Error(t, err)
		})
	}
}
