package scalebench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func item(bytes int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CLAIM"},
		"v": &types.AttributeValueMemberS{Value: strings.Repeat("x", bytes-len("pk")-len("CLAIM")-len("v"))}}
}

func TestItemSizeCountsNamesAndValues(t *testing.T) {
	assert.Equal(t, 4096, state.ItemSize(item(4096)))
	assert.Equal(t, len("n")+2, state.ItemSize(map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "12"}}))
	assert.Equal(t, len("m")+3+1+len("a")+len("bc"), state.ItemSize(map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{
		Value: map[string]types.AttributeValue{"a": &types.AttributeValueMemberS{Value: "bc"}}}}))
}

func TestReadUnitsFollowDynamoDBsBilling(t *testing.T) {
	strong, eventual := aws.Bool(true), aws.Bool(false)
	// A query page is summed before rounding: 3 items of 2 KB are 6 KB, 2 units strongly consistent.
	query := &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{item(2048), item(2048), item(2048)}}
	assert.Equal(t, 2.0, readUnits(&dynamodb.QueryInput{ConsistentRead: strong}, query))
	assert.Equal(t, 1.0, readUnits(&dynamodb.QueryInput{ConsistentRead: eventual}, query), "eventual reads cost half")
	assert.Equal(t, 1.0, readUnits(&dynamodb.QueryInput{ConsistentRead: strong}, &dynamodb.QueryOutput{}), "an empty page still costs a unit")
	// GetItem rounds each item up; a missing item still costs the minimum.
	assert.Equal(t, 2.0, readUnits(&dynamodb.GetItemInput{ConsistentRead: strong}, &dynamodb.GetItemOutput{Item: item(4097)}))
	assert.Equal(t, 0.5, readUnits(&dynamodb.GetItemInput{}, &dynamodb.GetItemOutput{}))
	// BatchGetItem is per item; TransactGetItems twice.
	batch := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{"t": {item(100), item(5000)}}}
	assert.Equal(t, 3.0, readUnits(&dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {ConsistentRead: strong}}}, batch))
	assert.Equal(t, 2.0, readUnits(&dynamodb.TransactGetItemsInput{}, &dynamodb.TransactGetItemsOutput{Responses: []types.ItemResponse{{Item: item(10)}}}))
	assert.Zero(t, readUnits(&dynamodb.PutItemInput{}, &dynamodb.PutItemOutput{}), "writes are not reads")
}

func TestByteCounterCountsResponseBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(strings.Repeat("y", 1234))) }))
	defer srv.Close()
	var c ByteCounter
	cfg := &rest.Config{Host: srv.URL}
	c.Wrap(cfg)
	rt, err := rest.TransportFor(cfg)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	assert.Equal(t, int64(2468), c.Load())
	c.Reset()
	assert.Zero(t, c.Load())
}

func TestResultsAreMediansOfTheRepetitions(t *testing.T) {
	runs := []ChildResult{
		{MemoryMB: 1024, Cold: Measure{PeakRSSMB: 300, Seconds: 3, APIServerBytesRead: 30}, Steady: Measure{Seconds: 1}},
		{MemoryMB: 1024, Cold: Measure{PeakRSSMB: 100, Seconds: 9, APIServerBytesRead: 10}, Steady: Measure{Seconds: 2}},
		{MemoryMB: 1024, Cold: Measure{PeakRSSMB: 200, Seconds: 1, APIServerBytesRead: 20}, Steady: Measure{Seconds: 3}},
	}
	r := NewResult("provisioner", Tiers[0], runs)
	assert.Equal(t, Result{Function: "provisioner", Nodes: 1000, Pods: 30000, MemoryMB: 1024, PeakRSSMB: 200, Seconds: 3,
		APIServerBytesRead: 20, Steady: Measure{Seconds: 2}, Runs: 3}, r)
}
