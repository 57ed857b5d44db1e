package apis_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// TestNotSupportedYet checks that each setting Karpenter marks new or gated, and that Nodewright does not
// implement yet, is refused with the "not supported yet" message even when it is otherwise valid.
func TestNotSupportedYet(t *testing.T) {
	ncCases := []struct {
		name, path string
		mutate     func(*apis.EC2NodeClass)
	}{
		{"placement group", "spec.placementGroupSelector", func(nc *apis.EC2NodeClass) {
			nc.Spec.PlacementGroupSelector = &apis.PlacementGroupSelector{Name: ptr("cluster-pg")}
		}},
		{"ip prefixes", "spec.ipPrefixCount", func(nc *apis.EC2NodeClass) { nc.Spec.IPPrefixCount = ptr(int32(1)) }},
		{"network interfaces", "spec.networkInterfaces", func(nc *apis.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*apis.NetworkInterface{{InterfaceType: apis.InterfaceTypeInterface}}
		}},
		{"connection tracking", "spec.connectionTracking", func(nc *apis.EC2NodeClass) {
			nc.Spec.ConnectionTracking = &apis.ConnectionTracking{UDPTimeout: ptr(int32(45))}
		}},
		{"cpu options", "spec.cpuOptions", func(nc *apis.EC2NodeClass) {
			nc.Spec.CPUOptions = &apis.CPUOptions{NestedVirtualization: ptr("enabled")}
		}},
		{"kubelet pass-through field", "spec.kubelet.enableSystemLogQuery", func(nc *apis.EC2NodeClass) {
			nc.Spec.Kubelet["enableSystemLogQuery"] = []byte("true")
		}},
		{"kubelet maxPods expression", "spec.kubelet.maxPods", func(nc *apis.EC2NodeClass) {
			nc.Spec.Kubelet["maxPods"] = []byte(`"max_pods"`)
		}},
	}
	for _, c := range ncCases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			c.mutate(nc)
			errs := apis.ValidateEC2NodeClass(nc)
			require.Len(t, errs, 1)
			assert.Equal(t, c.path, errs[0].Field)
			assert.Equal(t, field.ErrorTypeForbidden, errs[0].Type)
			assert.True(t, strings.HasPrefix(errs[0].Detail, apis.NotSupportedYet), errs[0].Detail)
		})
	}
}

// TestWindowsIsRefused: every way of asking for Windows nodes — amiFamily, or an alias whose family is
// Windows, with or without amiFamily: Custom — is refused at the field that asks for it, since no launch
// from such a class could work yet.
func TestWindowsIsRefused(t *testing.T) {
	const why = "Forbidden: not supported yet by nodewright: Windows nodes (%s); use AL2023, AL2, Bottlerocket, or Custom with a Linux AMI"
	byTags := []apis.AMISelectorTerm{{Tags: map[string]string{"os": "windows"}}}
	cases := []struct {
		name   string
		family *string
		terms  []apis.AMISelectorTerm
		want   []string
	}{
		{"amiFamily Windows2019", ptr(apis.AMIFamilyWindows2019), byTags,
			[]string{"spec.amiFamily: " + fmt.Sprintf(why, "Windows2019")}},
		{"amiFamily Windows2022", ptr(apis.AMIFamilyWindows2022), byTags,
			[]string{"spec.amiFamily: " + fmt.Sprintf(why, "Windows2022")}},
		{"amiFamily Windows2025", ptr(apis.AMIFamilyWindows2025), byTags,
			[]string{"spec.amiFamily: " + fmt.Sprintf(why, "Windows2025")}},
		{"windows alias", nil, []apis.AMISelectorTerm{{Alias: "windows2022@latest"}},
			[]string{"spec.amiSelectorTerms[0].alias: " + fmt.Sprintf(why, "windows2022@latest")}},
		{"windows alias with Custom", ptr(apis.AMIFamilyCustom), []apis.AMISelectorTerm{{Alias: "windows2019@latest"}},
			[]string{"spec.amiSelectorTerms[0].alias: " + fmt.Sprintf(why, "windows2019@latest")}},
		{"windows alias and family", ptr(apis.AMIFamilyWindows2025), []apis.AMISelectorTerm{{Alias: "windows2025@latest"}},
			[]string{"spec.amiFamily: " + fmt.Sprintf(why, "Windows2025"), "spec.amiSelectorTerms[0].alias: " + fmt.Sprintf(why, "windows2025@latest")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			nc.Spec.AMIFamily, nc.Spec.AMISelectorTerms = c.family, c.terms
			var got []string
			for _, e := range apis.ValidateEC2NodeClass(nc) {
				got = append(got, e.Error())
			}
			assert.Equal(t, c.want, got)
		})
	}
	for _, linux := range []string{"al2023@latest", "al2@latest", "bottlerocket@latest"} {
		nc := baseEC2NodeClass(t)
		nc.Spec.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: linux}}
		assert.Empty(t, apis.ValidateEC2NodeClass(nc), linux)
	}
}
