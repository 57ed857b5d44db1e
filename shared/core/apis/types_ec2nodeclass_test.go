package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestParseAlias(t *testing.T) {
	cases := []struct {
		in   string
		want apis.Alias
		ok   bool
	}{
		{"al2023@latest", apis.Alias{Family: "AL2023", Version: "latest"}, true},
		{"al2@v20240807", apis.Alias{Family: "AL2", Version: "v20240807"}, true},
		{"bottlerocket@v1.20.0", apis.Alias{Family: "Bottlerocket", Version: "v1.20.0"}, true},
		{"windows2025@latest", apis.Alias{Family: "Windows2025", Version: "latest"}, true},
		{"ubuntu@latest", apis.Alias{}, false},
		{"al2023", apis.Alias{}, false},
		{"al2023@", apis.Alias{}, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := apis.ParseAlias(c.in)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestAMIFamily(t *testing.T) {
	nc := baseEC2NodeClass(t)
	assert.Equal(t, apis.AMIFamilyAL2023, nc.AMIFamily(), "from the alias")
	nc.Spec.AMIFamily = ptr(apis.AMIFamilyCustom)
	assert.Equal(t, apis.AMIFamilyCustom, nc.AMIFamily(), "explicit family wins")
	nc.Spec.AMIFamily = nil
	nc.Spec.AMISelectorTerms = []apis.AMISelectorTerm{{ID: "ami-1"}}
	assert.Equal(t, apis.AMIFamilyCustom, nc.AMIFamily(), "no family and no alias")
	_, ok := nc.Alias()
	assert.False(t, ok)
}

func TestVolumeSizeQuantity(t *testing.T) {
	q, ok := (&apis.BlockDevice{VolumeSize: ptr("100Gi")}).VolumeSizeQuantity()
	require.True(t, ok)
	assert.True(t, q.Equal(resource.MustParse("100Gi")))
	_, ok = (&apis.BlockDevice{}).VolumeSizeQuantity()
	assert.False(t, ok)
	_, ok = (&apis.BlockDevice{VolumeSize: ptr("big")}).VolumeSizeQuantity()
	assert.False(t, ok)
}
