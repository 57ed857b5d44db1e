package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storedTable is a provisioning.SpotPriceSource with a fixed answer.
type storedTable struct {
	loaded bool
	err    error
}

func (s storedTable) Load(context.Context) (bool, error) { return s.loaded, s.err }

func TestColdStartReadsEC2OnlyWhenNothingIsStored(t *testing.T) {
	for name, tc := range map[string]struct {
		stored   storedTable
		ec2Err   error
		wantEC2  bool
		wantErrs []string
	}{
		"stored table loaded":    {stored: storedTable{loaded: true}},
		"nothing stored yet":     {stored: storedTable{}, wantEC2: true},
		"state table unreadable": {stored: storedTable{err: errors.New("AccessDenied")}, wantEC2: true},
		"neither source answers": {stored: storedTable{err: errors.New("AccessDenied")}, ec2Err: errors.New("RequestLimitExceeded"), wantEC2: true, wantErrs: []string{"AccessDenied", "RequestLimitExceeded"}},
		"EC2 fails, none stored": {stored: storedTable{}, ec2Err: errors.New("RequestLimitExceeded"), wantEC2: true, wantErrs: []string{"RequestLimitExceeded"}},
	} {
		t.Run(name, func(t *testing.T) {
			readEC2 := false
			err := warmSpotPrices(context.Background(), tc.stored, func(context.Context) error { readEC2 = true; return tc.ec2Err })
			assert.Equal(t, tc.wantEC2, readEC2)
			if len(tc.wantErrs) == 0 {
				require.NoError(t, err, "a fallback that worked covers a failed stored read")
				return
			}
			for _, want := range tc.wantErrs {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}
