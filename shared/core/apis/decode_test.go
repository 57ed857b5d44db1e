package apis_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

const minimalNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %s}
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
`

func nodePoolDoc(name string) string { return strings.ReplaceAll(minimalNodePool, "%s", name) }

func TestDecodeAccepts(t *testing.T) {
	cases := []struct {
		name        string
		input       string
		nodePools   []string
		nodeClasses []string
		origins     []apis.Origin // of the NodePools
	}{
		{
			name:      "one document",
			input:     nodePoolDoc("a"),
			nodePools: []string{"a"},
			origins:   []apis.Origin{{File: "f.yaml", Document: 1, Item: -1}},
		},
		{
			name:      "many documents with empty ones and comments",
			input:     "---\n# nothing here\n---\n" + nodePoolDoc("a") + "---\n---\n" + nodePoolDoc("b"),
			nodePools: []string{"a", "b"},
			origins:   []apis.Origin{{File: "f.yaml", Document: 2, Item: -1}, {File: "f.yaml", Document: 3, Item: -1}}, // empty documents are not counted
		},
		{
			name: "v1 List of both kinds",
			input: `apiVersion: v1
kind: List
items:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: a}
  spec: {template: {spec: {requirements: [], nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}}}}
- apiVersion: karpenter.k8s.aws/v1
  kind: EC2NodeClass
  metadata: {name: c}
  spec: {role: r, subnetSelectorTerms: [{id: subnet-1}], securityGroupSelectorTerms: [{id: sg-1}], amiSelectorTerms: [{alias: al2@latest}]}
`,
			nodePools:   []string{"a"},
			nodeClasses: []string{"c"},
			origins:     []apis.Origin{{File: "f.yaml", Document: 1, Item: 0}},
		},
		{
			name:      "a List and a plain document in one file",
			input:     "apiVersion: v1\nkind: List\nitems: []\n---\n" + nodePoolDoc("z"),
			nodePools: []string{"z"},
			origins:   []apis.Origin{{File: "f.yaml", Document: 2, Item: -1}},
		},
		{
			name: "typed list whose items leave out their type",
			input: `apiVersion: karpenter.sh/v1
kind: NodePoolList
items:
- metadata: {name: a}
  spec: {template: {spec: {requirements: [], nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}}}}
`,
			nodePools: []string{"a"},
			origins:   []apis.Origin{{File: "f.yaml", Document: 1, Item: 0}},
		},
		{
			name: "stream of JSON objects",
			input: `{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "j1"},
 "spec": {"template": {"spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "c"}}}}}
{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "j2"},
 "spec": {"template": {"spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "c"}}}}}`,
			nodePools: []string{"j1", "j2"},
			origins:   []apis.Origin{{File: "f.yaml", Document: 1, Item: -1}, {File: "f.yaml", Document: 2, Item: -1}},
		},
		{
			name:  "empty input",
			input: "",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := apis.Decode("f.yaml", []byte(c.input))
			require.NoError(t, err)
			var names, classes []string
			var origins []apis.Origin
			for _, np := range objs.NodePools {
				names = append(names, np.Name)
				origins = append(origins, np.Origin)
			}
			for _, nc := range objs.EC2NodeClasses {
				classes = append(classes, nc.Name)
			}
			assert.Equal(t, c.nodePools, names)
			assert.Equal(t, c.nodeClasses, classes)
			assert.Equal(t, c.origins, origins)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string // one substring per expected error, in order
		kept  int      // NodePools that still decoded
	}{
		{"unknown field names its path", strings.Replace(nodePoolDoc("a"), "requirements: []", "requirements: []\n      requirments: []", 1),
			[]string{`f.yaml: document 1: strict decoding error: unknown field "spec.template.spec.requirments"`}, 0},
		{"unknown top-level field", nodePoolDoc("a") + "extra: 1\n", []string{`unknown field "extra"`}, 0},
		{"duplicate field", strings.Replace(nodePoolDoc("a"), "kind: NodePool", "kind: NodePool\nkind: NodePool", 1),
			[]string{`f.yaml: document 1: invalid YAML`}, 0},
		{"wrong type", strings.Replace(nodePoolDoc("a"), "requirements: []", "requirements: yes", 1),
			[]string{`f.yaml: document 1: json: cannot unmarshal bool`}, 0},
		{"old apiVersion", strings.Replace(nodePoolDoc("a"), "karpenter.sh/v1", "karpenter.sh/v1beta1", 1),
			[]string{`unsupported apiVersion "karpenter.sh/v1beta1" for kind NodePool: want karpenter.sh/v1`}, 0},
		{"EC2NodeClass with the core group", "apiVersion: karpenter.sh/v1\nkind: EC2NodeClass\nmetadata: {name: a}\n",
			[]string{`unsupported apiVersion "karpenter.sh/v1" for kind EC2NodeClass: want karpenter.k8s.aws/v1`}, 0},
		{"unknown kind", "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n", []string{`unsupported kind "CapacityBuffer"`}, 0},
		{"NodeClaim is not configuration", "apiVersion: karpenter.sh/v1\nkind: NodeClaim\n", []string{`unsupported kind "NodeClaim"`}, 0},
		{"missing kind", "apiVersion: karpenter.sh/v1\nmetadata: {name: a}\n", []string{`document 1: kind is required`}, 0},
		{"not an object", "- a\n- b\n", []string{`document 1: a document must be an object with apiVersion and kind, not a list`}, 0},
		{"scalar document", "just text\n", []string{`not a string`}, 0},
		{"bad YAML in the middle keeps the others", nodePoolDoc("a") + "---\nkey: [unclosed\n---\n" + nodePoolDoc("b"),
			[]string{`f.yaml: document 2: invalid YAML`}, 2},
		{"errors in two documents", "kind: Foo\napiVersion: v1\n---\nkind: Bar\napiVersion: v1\n",
			[]string{`document 1: unsupported kind "Foo"`, `document 2: unsupported kind "Bar"`}, 0},
		{"list item of the wrong kind", "apiVersion: karpenter.sh/v1\nkind: NodePoolList\nitems:\n- apiVersion: karpenter.k8s.aws/v1\n  kind: EC2NodeClass\n",
			[]string{`document 1, items[0]: a NodePoolList may only hold NodePool objects`}, 0},
		{"nested list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n",
			[]string{`items[0]: a List may not hold another list`}, 0},
		{"list item not an object", "apiVersion: v1\nkind: List\nitems:\n- 42\n", []string{`items[0]: a list item must be an object with apiVersion and kind, not a number`}, 0},
		{"unknown field in a list item", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: karpenter.sh/v1\n  kind: NodePool\n  spec: {bogus: 1}\n",
			[]string{`items[0]: strict decoding error: unknown field "spec.bogus"`}, 0},
		{"list with an unknown field", "apiVersion: v1\nkind: List\nitems: []\nbogus: true\n", []string{`unknown field "bogus"`}, 0},
		{"broken JSON", `{"apiVersion": "karpenter.sh/v1", `, []string{`document 1: invalid JSON`}, 0},
		{"unknown field in template metadata", strings.Replace(nodePoolDoc("a"), "    spec:\n      requirements", "    metadata: {name: x}\n    spec:\n      requirements", 1),
			[]string{`unknown field "spec.template.metadata.name"`}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := apis.Decode("f.yaml", []byte(c.input))
			require.Error(t, err)
			var derrs apis.DecodeErrors
			require.True(t, errors.As(err, &derrs))
			require.Len(t, derrs, len(c.want), err.Error())
			for i, want := range c.want {
				assert.Contains(t, derrs[i].Error(), want)
			}
			assert.Len(t, objs.NodePools, c.kept)
		})
	}
}

func TestOriginString(t *testing.T) {
	assert.Equal(t, "a.yaml: document 2", apis.Origin{File: "a.yaml", Document: 2, Item: -1}.String())
	assert.Equal(t, "a.yaml: document 1, items[3]", apis.Origin{File: "a.yaml", Document: 1, Item: 3}.String())
}

func TestObjectsAppend(t *testing.T) {
	var all apis.Objects
	all.Append(apis.Objects{NodePools: []*apis.NodePool{{}}})
	all.Append(apis.Objects{EC2NodeClasses: []*apis.EC2NodeClass{{}, {}}})
	assert.Len(t, all.NodePools, 1)
	assert.Len(t, all.EC2NodeClasses, 2)
}
