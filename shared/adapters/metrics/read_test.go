package metrics

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsReadsWhatWriteWrote(t *testing.T) {
	var buf bytes.Buffer
	at := time.Now()
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{"cluster": "prod"},
		Values: map[string]float64{"b_metric": 2, "a_metric": 1}}, at))
	buf.WriteString("\n")
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{"cluster": "prod", "nodepool": "gpu"},
		Values: map[string]float64{"nodeclaims_created": 3}}, at))
	recs, err := Records(buf.Bytes())
	require.NoError(t, err)
	require.Len(t, recs, 2, "blank lines are skipped")
	assert.Equal(t, []string{"a_metric", "b_metric"}, MetricNames(recs[0]))
	assert.Equal(t, "gpu", recs[1]["nodepool"])
	assert.EqualValues(t, 3, recs[1]["nodeclaims_created"])

	_, err = Records([]byte("{\"_aws\":{}}\nnot json\n"))
	assert.ErrorContains(t, err, "line 1: not an EMF record")
	_, err = Records([]byte("\nnot json\n"))
	assert.ErrorContains(t, err, "line 2")
	recs, err = Records(nil)
	assert.NoError(t, err)
	assert.Empty(t, recs)
}
