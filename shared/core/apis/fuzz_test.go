package apis_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// FuzzDecode feeds arbitrary bytes to Decode and what it decodes to SetDefaults, the validators and the
// hashes: none of them may panic. Plain `go test` runs only the seeds (every manifest under testdata and
// a few odd inputs); `go test -fuzz=FuzzDecode` explores further.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"valid", "defaults", "invalid"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	for _, seed := range []string{
		"", "---", "null", "[]", "{}", "42", `"x"`, "apiVersion: v1\nkind: List\nitems: [null, 1, {}]\n",
		"apiVersion: karpenter.sh/v1\nkind: NodePoolList\nitems: [{}]\n",
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nspec: {template: {spec: {nodeClassRef: null, requirements: [{minValues: -1}]}}}\n",
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nspec: {kubelet: {maxPods: [], evictionSoft: 1}, blockDeviceMappings: [null], networkInterfaces: [null]}\n",
		"{\"apiVersion\":\"karpenter.sh/v1\"}{", "a: &a [*a]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := apis.Decode("fuzz.yaml", data)
		for _, np := range objs.NodePools {
			_ = apis.NodePoolTemplateHash(np)
		}
		for _, nc := range objs.EC2NodeClasses {
			_ = apis.EC2NodeClassHash(nc)
		}
		_ = apis.DefaultAndValidate(objs)
		_ = apis.MissingNodeClasses(objs)
		for _, np := range objs.NodePools {
			_ = apis.NewNodeClaim(np)
		}
	})
}
