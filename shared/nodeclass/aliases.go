package nodeclass

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/apis"
)

// aliasParameter is one public SSM parameter behind an AMI alias and the nodes its AMI serves.
type aliasParameter struct {
	path         string
	requirements []corev1.NodeSelectorRequirement
}

// Label keys an AMI's requirements use.
const (
	labelArch        = "kubernetes.io/arch"
	labelOS          = "kubernetes.io/os"
	labelGPUCount    = "karpenter.k8s.aws/instance-gpu-count"
	labelAccelerator = "karpenter.k8s.aws/instance-accelerator-count"
)

var ec2Arch = map[string]string{"amd64": "x86_64", "arm64": "arm64"}

func archIs(arch string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: labelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}
}

func exists(key string, yes bool) corev1.NodeSelectorRequirement {
	op := corev1.NodeSelectorOpDoesNotExist
	if yes {
		op = corev1.NodeSelectorOpExists
	}
	return corev1.NodeSelectorRequirement{Key: key, Operator: op}
}

// aliasParameters lists the SSM parameters an alias resolves through for a Kubernetes version
// ("1.34"). Families publish a standard image per architecture and an NVIDIA one for GPU instances.
func aliasParameters(alias apis.Alias, k8sVersion string) ([]aliasParameter, error) {
	var out []aliasParameter
	latest := alias.Version == apis.AliasVersionLatest
	for _, arch := range []string{"amd64", "arm64"} {
		a := ec2Arch[arch]
		standard := []corev1.NodeSelectorRequirement{archIs(arch), exists(labelGPUCount, false), exists(labelAccelerator, false)}
		gpu := []corev1.NodeSelectorRequirement{archIs(arch), exists(labelGPUCount, true)}
		switch alias.Family {
		case apis.AMIFamilyAL2023:
			for _, v := range []struct {
				variant string
				reqs    []corev1.NodeSelectorRequirement
			}{{"standard", standard}, {"nvidia", gpu}} {
				release := "recommended"
				if !latest {
					release = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", a, v.variant, k8sVersion, alias.Version)
				}
				out = append(out, aliasParameter{
					path:         fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8sVersion, a, v.variant, release),
					requirements: v.reqs,
				})
			}
		case apis.AMIFamilyBottlerocket:
			version := "latest"
			if !latest {
				version = strings.TrimPrefix(alias.Version, "v")
			}
			out = append(out,
				aliasParameter{path: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s/%s/image_id", k8sVersion, a, version), requirements: standard},
				aliasParameter{path: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/%s/%s/image_id", k8sVersion, a, version), requirements: gpu})
		case apis.AMIFamilyAL2:
			if !al2Supported(k8sVersion) {
				return nil, fmt.Errorf("the al2 alias is not available for Kubernetes %s (EKS publishes no AL2 AMIs from 1.33 on); use al2023 or bottlerocket", k8sVersion)
			}
			variant := "amazon-linux-2"
			if arch == "arm64" {
				variant = "amazon-linux-2-arm64"
			}
			release := "recommended"
			if !latest {
				release = fmt.Sprintf("amazon-eks-node-%s-%s", k8sVersion, alias.Version)
			}
			out = append(out, aliasParameter{path: fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s/%s/image_id", k8sVersion, variant, release), requirements: standard})
			if arch == "amd64" {
				out = append(out, aliasParameter{path: fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2-gpu/%s/image_id", k8sVersion, release), requirements: gpu})
			}
		case apis.AMIFamilyWindows2019, apis.AMIFamilyWindows2022, apis.AMIFamilyWindows2025:
			if arch != "amd64" {
				continue
			}
			year := strings.TrimPrefix(alias.Family, "Windows")
			out = append(out, aliasParameter{
				path:         fmt.Sprintf("/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id", year, k8sVersion),
				requirements: []corev1.NodeSelectorRequirement{archIs(arch), {Key: labelOS, Operator: corev1.NodeSelectorOpIn, Values: []string{"windows"}}},
			})
		default:
			return nil, fmt.Errorf("alias family %q has no public AMI parameters", alias.Family)
		}
	}
	return out, nil
}

// al2Supported reports whether EKS still publishes AL2 AMIs for a Kubernetes minor ("1.32" yes, "1.33" no).
func al2Supported(k8sVersion string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(k8sVersion, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major == 1 && minor < 33
}
