package doclinks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryRelativeLinkInTheRepositoryResolves is the check itself, over the whole repository.
func TestEveryRelativeLinkInTheRepositoryResolves(t *testing.T) {
	broken, err := Check(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	for _, b := range broken {
		t.Error(b.String())
	}
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

// TestCheckFindsEveryKindOfDeadLink proves the check can fail: each dead link below is reported, and
// the good ones are not.
func TestCheckFindsEveryKindOfDeadLink(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "README.md", "# Top\n\n"+
		"[ok file](infra/README.md) [ok heading](infra/README.md#the-nodewright-cli) [ok here](#top)\n"+
		"[ok folder](infra) [ok url](https://example.com/x) [ok repeat](infra/README.md#notes-1)\n"+
		"[gone](docs/missing.md) [bad heading](infra/README.md#nowhere) [bad here](#bottom)\n"+
		"`[not a link](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n")
	write(t, dir, "infra/README.md", "# The `nodewright` CLI\n\n## Notes\n\n## Notes\n\n[up](../README.md#top) [up wrong](../README.md#deploy)\n")
	broken, err := Check(dir)
	require.NoError(t, err)
	var got []string
	for _, b := range broken {
		got = append(got, b.File+" "+b.Target)
	}
	assert.ElementsMatch(t, []string{
		"README.md docs/missing.md",
		"README.md infra/README.md#nowhere",
		"README.md #bottom",
		filepath.Join("infra", "README.md") + " ../README.md#deploy",
	}, got)
}

func TestAnchorIsGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		" Drift, expiration and manual disruption":    "drift-expiration-and-manual-disruption",
		" The `nodewright` CLI":                       "the-nodewright-cli",
		" `shared/`: the library the functions share": "shared-the-library-the-functions-share",
		" Deploy in four steps":                       "deploy-in-four-steps",
		" snake_case and 1.34":                        "snake_case-and-134",
	} {
		assert.Equal(t, want, Anchor(heading), heading)
	}
}
