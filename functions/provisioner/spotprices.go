package main

import (
	"context"
	"errors"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// warmSpotPrices loads the stored spot price table while the container starts. Only when none could be
// loaded (the lifecycle function has not stored one yet, or the state table cannot be read) does it read
// EC2 itself, so a fresh deployment still prices spot before the first lifecycle run; afterwards runs load
// the stored table (at most once a minute) and never read EC2 for prices.
func warmSpotPrices(ctx context.Context, stored provisioning.SpotPriceSource, readEC2 func(context.Context) error) error {
	loaded, err := stored.Load(ctx)
	if loaded {
		return nil
	}
	if rerr := readEC2(ctx); rerr != nil {
		return errors.Join(err, rerr)
	}
	return nil
}
