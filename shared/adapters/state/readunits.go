package state

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// readUnitBytes is what one read unit buys in a strongly consistent read.
const readUnitBytes = 4096

// readUnits is what DynamoDB bills for one strongly consistent Query page that returned items: their
// sizes summed and rounded up to 4 KB, one unit per 4 KB, at least one unit.
func readUnits(items []map[string]types.AttributeValue) float64 {
	n := 0
	for _, it := range items {
		n += ItemSize(it)
	}
	return float64(max(1, (n+readUnitBytes-1)/readUnitBytes))
}

// queryItems runs a query to the end, following LastEvaluatedKey, and returns its items as stored and
// the read units it cost (readUnits of each page).
func (s *Store) queryItems(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, float64, error) {
	var out []map[string]types.AttributeValue
	units := 0.0
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, units, err
		}
		out = append(out, page.Items...)
		units += readUnits(page.Items)
	}
	return out, units, nil
}
