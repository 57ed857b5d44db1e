package state

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Domain errors. Adapters above this package test for them with errors.Is or the IsX helpers.
var (
	ErrNotFound        = errors.New("not found")
	ErrAlreadyExists   = errors.New("already exists")
	ErrConflict        = errors.New("changed by someone else (version conflict)")
	ErrLeaseHeld       = errors.New("lease is held by another holder")
	ErrLeaseLost       = errors.New("lease is no longer ours")
	ErrBudgetExhausted = errors.New("disruption budget exhausted")
	ErrItemTooLarge    = errors.New("item exceeds the size this store allows")
	ErrInvalid         = errors.New("invalid")
)

// IsNotFound reports whether err means the item does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is a lost optimistic-locking race.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// IsAlreadyExists reports whether a create found the item already there.
func IsAlreadyExists(err error) bool { return errors.Is(err, ErrAlreadyExists) }

// IgnoreNotFound returns nil for ErrNotFound and err otherwise.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// conditionFailed reports whether DynamoDB refused a write because its condition did not hold, either on
// a single-item write or on any item of a transaction.
func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return true
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if r.Code != nil && *r.Code == "ConditionalCheckFailed" {
				return true
			}
		}
	}
	return false
}

// mapCondition turns a failed condition into the domain error domain, keeping other errors as they are.
func mapCondition(err error, domain error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if conditionFailed(err) {
		return fmt.Errorf("%s: %w", what, domain)
	}
	return fmt.Errorf("%s: %w", what, err)
}
