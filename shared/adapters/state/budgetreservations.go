package state

import (
	"context"
	"fmt"
	"time"
)

// DisruptionReservation is one claim's slot on a NodePool's disruption-budget ledger.
type DisruptionReservation struct {
	Claim string
	At    time.Time
}

// DisruptionReservations lists the claims holding a slot of nodePool's disruption budget, so a caller
// can release slots whose holder crashed before recording what it reserved them for.
func (s *Store) DisruptionReservations(ctx context.Context, nodePool string) ([]DisruptionReservation, error) {
	type item struct {
		SK string `dynamodbav:"sk"`
		At int64  `dynamodbav:"at"`
	}
	items, err := queryAll[item](ctx, s.db, s.partition(budgetPartition+"#"+nodePool, ""))
	if err != nil {
		return nil, fmt.Errorf("listing disruption reservations of %s: %w", nodePool, err)
	}
	out := make([]DisruptionReservation, 0, len(items))
	for _, it := range items {
		out = append(out, DisruptionReservation{Claim: it.SK, At: time.UnixMilli(it.At)})
	}
	return out, nil
}
