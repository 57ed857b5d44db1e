package apis_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// TestValidCorpus decodes, defaults and validates every manifest under testdata/valid: each must be
// accepted without a single error.
func TestValidCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 20)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			objs, err := apis.Decode(file, data)
			require.NoError(t, err)
			assert.NotEmpty(t, len(objs.NodePools)+len(objs.EC2NodeClasses), "no objects decoded")
			for _, e := range apis.DefaultAndValidate(objs) {
				assert.Fail(t, "unexpected validation error", e.Error())
			}
		})
	}
}
