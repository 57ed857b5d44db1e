package state

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const leasePartition = "LEASE"

// Lease is a time-bound right to be the single writer for something (the provisioner of a cluster, say).
// Token is a fencing token: it grows with every acquisition, so a holder that lost its lease while paused
// can be told apart from the new one.
type Lease struct {
	Name      string
	Holder    string
	Token     int64
	ExpiresAt time.Time
}

// AcquireLease takes the lease for holder for ttl if it is free, expired, or already holder's (a re-take
// starts a new term with a new token). ErrLeaseHeld if someone else holds it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (Lease, error) {
	now := s.now()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 key(leasePartition, name),
		UpdateExpression:    aws.String("SET holder = :h, expiresAt = :exp, #tok = if_not_exists(#tok, :zero) + :one"),
		ConditionExpression: aws.String("attribute_not_exists(#pk) OR expiresAt <= :now OR holder = :h"),
		ExpressionAttributeNames: map[string]string{
			"#pk": PartitionKey, "#tok": "token",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":h": str(holder), ":exp": num(now.Add(ttl).UnixMilli()), ":now": num(now.UnixMilli()),
			":zero": num(0), ":one": num(1),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err := mapCondition(err, ErrLeaseHeld, "acquiring lease %s for %s", name, holder); err != nil {
		return Lease{}, err
	}
	token, err := numberAttr(out.Attributes, "token")
	if err != nil {
		return Lease{}, fmt.Errorf("lease %s: %w", name, err)
	}
	return Lease{Name: name, Holder: holder, Token: token, ExpiresAt: time.UnixMilli(now.Add(ttl).UnixMilli())}, nil
}

// RenewLease extends a lease still held under the same token. ErrLeaseLost when it was taken over.
func (s *Store) RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	exp := s.now().Add(ttl)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(leasePartition, l.Name),
		UpdateExpression:          aws.String("SET expiresAt = :exp"),
		ConditionExpression:       aws.String("holder = :h AND #tok = :tok"),
		ExpressionAttributeNames:  map[string]string{"#tok": "token"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": str(l.Holder), ":tok": num(l.Token), ":exp": num(exp.UnixMilli())},
	})
	if err := mapCondition(err, ErrLeaseLost, "renewing lease %s", l.Name); err != nil {
		return Lease{}, err
	}
	l.ExpiresAt = time.UnixMilli(exp.UnixMilli())
	return l, nil
}

// LeaseReleaseBudget is how long a holder gives ReleaseLease, apart from its own deadline. A release cut
// short leaves the lease held until it expires (minutes), stalling the next run, so the budget covers
// the client's retries (see shortBackoff) while staying inside the margin every holder keeps before its
// deadline (the lifecycle's 10 s, the provisioner's 20 s).
const LeaseReleaseBudget = 10 * time.Second

// releaseMaxBackoff caps the pause between a release's attempts. The store's client backs off up to 5 s
// between attempts, which suits bulk writes riding out throttling; three failed attempts of a release in
// a row then took longer than LeaseReleaseBudget. A release is one small write whose delay holds up the
// next run, so it retries at once-a-second pace: eight attempts fit the budget.
const releaseMaxBackoff = time.Second

// shortBackoff caps the retryer's backoff for one call at releaseMaxBackoff.
func shortBackoff(o *dynamodb.Options) {
	o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, releaseMaxBackoff)
}

// ReleaseLease ends a lease early so the next writer need not wait for it to expire. Releasing a lease
// that was already taken over is ErrLeaseLost and changes nothing.
func (s *Store) ReleaseLease(ctx context.Context, l Lease) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(leasePartition, l.Name),
		UpdateExpression:          aws.String("SET expiresAt = :zero"),
		ConditionExpression:       aws.String("holder = :h AND #tok = :tok"),
		ExpressionAttributeNames:  map[string]string{"#tok": "token"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": str(l.Holder), ":tok": num(l.Token), ":zero": num(0)},
	}, shortBackoff)
	return mapCondition(err, ErrLeaseLost, "releasing lease %s", l.Name)
}

func numberAttr(item map[string]types.AttributeValue, name string) (int64, error) {
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("attribute %s missing or not a number", name)
	}
	return strconv.ParseInt(n.Value, 10, 64)
}
