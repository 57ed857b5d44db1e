package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
)

const testdata = "../testdata"

func TestCheckValidCorpus(t *testing.T) {
	objs, errs := manifest.Check(nil, filepath.Join(testdata, "valid"))
	assert.Empty(t, errs)
	assert.Len(t, objs.NodePools, 21)
	assert.Len(t, objs.EC2NodeClasses, 15)
	for _, np := range objs.NodePools {
		assert.NotEmpty(t, np.Spec.Template.Spec.ExpireAfter, "objects come back defaulted")
	}
}

func TestCheckReportsEveryProblem(t *testing.T) {
	_, errs := manifest.Check(nil, filepath.Join(testdata, "invalid"))
	require.Len(t, errs, 7)
	var decodeErr *apis.DecodeError
	assert.True(t, errors.As(errs[0], &decodeErr), "decoding problems come first")
	var objErr apis.ObjectError
	assert.True(t, errors.As(errs[6], &objErr))
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	doc := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec: {template: {spec: {requirements: [], nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}}}}\n"
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("a.yaml", strings.ReplaceAll(doc, "%s", "a"))
	write("sub/b.YML", strings.ReplaceAll(doc, "%s", "b"))
	write("notes.txt", "not a manifest")
	write("c.json", `{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "c"}, "spec": {"template": {"spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "c"}}}}}`)

	objs, errs := manifest.Load(strings.NewReader(strings.ReplaceAll(doc, "%s", "stdin")), dir, manifest.Stdin, filepath.Join(dir, "missing.yaml"))
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], os.ErrNotExist)
	var names []string
	for _, np := range objs.NodePools {
		names = append(names, np.Name+"@"+filepath.Base(np.Origin.File))
	}
	assert.Equal(t, []string{"a@a.yaml", "c@c.json", "b@b.YML", "stdin@-"}, names)
}

func TestCheckNothingFound(t *testing.T) {
	_, errs := manifest.Check(strings.NewReader("# nothing\n"), manifest.Stdin)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "no NodePool or EC2NodeClass found in -")
}

func TestIsManifestFile(t *testing.T) {
	assert.True(t, manifest.IsManifestFile("a.yaml"))
	assert.True(t, manifest.IsManifestFile("a.JSON"))
	assert.False(t, manifest.IsManifestFile("a.yaml.bak"))
}
