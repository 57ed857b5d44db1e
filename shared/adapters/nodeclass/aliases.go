package nodeclass

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// aliasParameter is one public SSM parameter behind an AMI alias and the nodes its AMI serves: one
// requirement set per variant (an image may serve several, as AL2's GPU image serves NVIDIA and Neuron
// instances).
type aliasParameter struct {
	path         string
	requirements [][]corev1.NodeSelectorRequirement
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

// AMI variants, by the instances they serve: standard (no GPU, no accelerator), NVIDIA (GPU instances)
// and Neuron (Inferentia and Trainium instances, which carry the accelerator labels).
func standardReqs(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{archIs(arch), exists(labelGPUCount, false), exists(labelAccelerator, false)}
}

func nvidiaReqs(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{archIs(arch), exists(labelGPUCount, true)}
}

func neuronReqs(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{archIs(arch), exists(labelAccelerator, true)}
}

// aliasParameters lists the SSM parameters an alias resolves through for a Kubernetes version
// ("1.34"). Families publish a standard image per architecture, an NVIDIA one for GPU instances and, on
// x86_64, one for Neuron (Inferentia, Trainium) instances: AL2023 its own neuron variant; AL2 its GPU
// image, which carries the Neuron driver too; Bottlerocket its standard image, which does as well.
func aliasParameters(alias apis.Alias, k8sVersion string) ([]aliasParameter, error) {
	var out []aliasParameter
	latest := alias.Version == apis.AliasVersionLatest
	release := func(pinned string) string {
		if latest {
			return "recommended"
		}
		return pinned
	}
	for _, arch := range []string{"amd64", "arm64"} {
		a := ec2Arch[arch]
		switch alias.Family {
		case apis.AMIFamilyAL2023:
			variants := []struct {
				variant string
				reqs    []corev1.NodeSelectorRequirement
			}{{"standard", standardReqs(arch)}, {"nvidia", nvidiaReqs(arch)}}
			if arch == "amd64" {
				variants = append(variants, struct {
					variant string
					reqs    []corev1.NodeSelectorRequirement
				}{"neuron", neuronReqs(arch)})
			}
			for _, v := range variants {
				name := release(fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", a, v.variant, k8sVersion, alias.Version))
				out = append(out, aliasParameter{
					path:         fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8sVersion, a, v.variant, name),
					requirements: [][]corev1.NodeSelectorRequirement{v.reqs},
				})
			}
		case apis.AMIFamilyBottlerocket:
			version := "latest"
			if !latest {
				version = strings.TrimPrefix(alias.Version, "v")
			}
			standard := [][]corev1.NodeSelectorRequirement{standardReqs(arch)}
			if arch == "amd64" {
				standard = append(standard, neuronReqs(arch))
			}
			out = append(out,
				aliasParameter{path: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s/%s/image_id", k8sVersion, a, version), requirements: standard},
				aliasParameter{path: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/%s/%s/image_id", k8sVersion, a, version),
					requirements: [][]corev1.NodeSelectorRequirement{nvidiaReqs(arch)}})
		case apis.AMIFamilyAL2:
			if !al2Supported(k8sVersion) {
				return nil, fmt.Errorf("the al2 alias is not available for Kubernetes %s (EKS publishes no AL2 AMIs from 1.33 on); use al2023 or bottlerocket", k8sVersion)
			}
			// Pinned releases are named per image: amazon-eks-node-, amazon-eks-arm64-node- and
			// amazon-eks-gpu-node-<k8s>-<version>.
			variant, node := "amazon-linux-2", "node"
			if arch == "arm64" {
				variant, node = "amazon-linux-2-arm64", "arm64-node"
			}
			out = append(out, aliasParameter{
				path:         fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s/%s/image_id", k8sVersion, variant, release(fmt.Sprintf("amazon-eks-%s-%s-%s", node, k8sVersion, alias.Version))),
				requirements: [][]corev1.NodeSelectorRequirement{standardReqs(arch)},
			})
			if arch == "amd64" {
				out = append(out, aliasParameter{
					path:         fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2-gpu/%s/image_id", k8sVersion, release(fmt.Sprintf("amazon-eks-gpu-node-%s-%s", k8sVersion, alias.Version))),
					requirements: [][]corev1.NodeSelectorRequirement{nvidiaReqs(arch), neuronReqs(arch)},
				})
			}
		case apis.AMIFamilyWindows2019, apis.AMIFamilyWindows2022, apis.AMIFamilyWindows2025:
			if arch != "amd64" {
				continue
			}
			year := strings.TrimPrefix(alias.Family, "Windows")
			out = append(out, aliasParameter{
				path: fmt.Sprintf("/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id", year, k8sVersion),
				requirements: [][]corev1.NodeSelectorRequirement{{archIs(arch),
					{Key: labelOS, Operator: corev1.NodeSelectorOpIn, Values: []string{"windows"}}}},
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
