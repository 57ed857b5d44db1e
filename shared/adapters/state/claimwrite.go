package state

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// claimTxn is one TransactWriteItems that writes claims: each claim's own actions, then one increment of
// the change counter of every shard whose live claims it changes (see ClaimsView). The counters move in
// the same transaction as the claims, so a reader that finds a shard's counter unchanged knows that no
// live claim of the shard changed either.
type claimTxn struct {
	s     *Store
	items []types.TransactWriteItem
	// owner[i] is the index of the claim items[i] writes.
	owner  []int
	shards map[int]bool
	bytes  int
	// live is what the transaction does to the live claims, for the store's view (see liveWrite).
	live []liveWrite
	// own: the store's view learns of the transaction (not for the one a view's own read makes).
	own bool
}

func (s *Store) newClaimTxn() *claimTxn { return &claimTxn{s: s, shards: map[int]bool{}} }

// newOwnClaimTxn is a claim transaction the store's ClaimsView applies once it commits.
func (s *Store) newOwnClaimTxn() *claimTxn {
	t := s.newClaimTxn()
	t.own = s.view != nil
	return t
}

func (t *claimTxn) add(claim int, it types.TransactWriteItem) {
	t.items = append(t.items, it)
	t.owner = append(t.owner, claim)
}

// create adds the creation of claim i, c (already encoded as item): its item must not exist, and no
// claim of that name may be on the other side either (a deleted claim keeps its name until it expires).
func (t *claimTxn) create(i int, c Claim, item map[string]types.AttributeValue) {
	deleted := c.Lifecycle == Deleted
	t.add(i, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(t.s.table), Item: item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": PartitionKey},
	}})
	t.add(i, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(t.s.table), Key: key(claimPK(c.Name, !deleted), c.Name),
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #ttl <= :now"),
		ExpressionAttributeNames:  map[string]string{"#pk": PartitionKey, "#ttl": TTLAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(t.s.now().Unix())},
	}})
	t.touch(c.Name, deleted, item)
}

// update adds the update of claim i from old to c (already encoded as item), on the condition that the
// stored version is still old's. A claim that moves to deleted leaves its live shard: its live item is
// deleted and its deleted item written, in the same transaction.
func (t *claimTxn) update(i int, old, c Claim, item map[string]types.AttributeValue) {
	versioned := func() (*string, map[string]string, map[string]types.AttributeValue) {
		return aws.String("#v = :v"), map[string]string{"#v": "version"}, map[string]types.AttributeValue{":v": num(old.Version)}
	}
	if old.Lifecycle != Deleted && c.Lifecycle == Deleted {
		cond, names, values := versioned()
		t.add(i, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(t.s.table), Key: key(claimPK(c.Name, false), c.Name),
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		}})
		t.add(i, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(t.s.table), Item: item}})
		t.shards[claimShard(c.Name)] = true
		t.live = append(t.live, liveWrite{shard: claimShard(c.Name), name: c.Name})
		t.bytes += ItemSize(item)
		return
	}
	cond, names, values := versioned()
	t.add(i, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(t.s.table), Item: item,
		ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	}})
	t.touch(c.Name, c.Lifecycle == Deleted, item)
}

func (t *claimTxn) touch(name string, deleted bool, item map[string]types.AttributeValue) {
	if !deleted {
		t.shards[claimShard(name)] = true
		t.live = append(t.live, liveWrite{shard: claimShard(name), name: name, item: item})
	}
	t.bytes += ItemSize(item)
}

// counters appends the increments of the change counters of the shards touched.
func (t *claimTxn) counters() {
	shards := make([]int, 0, len(t.shards))
	for k := range t.shards {
		shards = append(shards, k)
	}
	sort.Ints(shards)
	for _, k := range shards {
		t.add(-1, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(t.s.table), Key: counterKey(k),
			UpdateExpression:          aws.String("ADD #c :one"),
			ExpressionAttributeNames:  map[string]string{"#c": attrChanges},
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1)},
		}})
	}
}

// run runs the transaction that writes cs, trying again while it only collides with other transactions
// (every claim write of a shard also writes the shard's counter). When every claim's condition failed on
// items that already hold these very writes, the SDK retried a transaction whose answer was lost, and it
// succeeded. A failed condition is a *ClaimsError wrapping domain.
func (t *claimTxn) run(ctx context.Context, op string, cs []Claim, domain error) error {
	if len(cs) == 0 {
		return nil
	}
	if len(cs) > MaxClaimsPerWrite {
		return fmt.Errorf("%s %d claims at once: at most %d: %w", op, len(cs), MaxClaimsPerWrite, ErrInvalid)
	}
	if t.bytes > maxTransactionBytes {
		return fmt.Errorf("%s %d claims at once: %d bytes, over %d: %w", op, len(cs), t.bytes, maxTransactionBytes, ErrInvalid)
	}
	t.counters()
	if t.own {
		done := t.s.view.beginOwnWrite(t)
		err := t.commit(ctx, op, cs, domain)
		done(err == nil)
		return err
	}
	return t.commit(ctx, op, cs, domain)
}

// commit runs the transaction (see run).
func (t *claimTxn) commit(ctx context.Context, op string, cs []Claim, domain error) error {
	var err error
	for attempt := 0; attempt < claimTransactionAttempts; attempt++ {
		_, err = t.s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
		if !transactionConflict(err) {
			break
		}
	}
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("%s %d claims: %w", op, len(cs), err)
	}
	failedClaims := map[int]bool{}
	for i, r := range tce.CancellationReasons {
		if failed(r) && i < len(t.owner) && t.owner[i] >= 0 {
			failedClaims[t.owner[i]] = true
		}
	}
	if len(failedClaims) == 0 {
		return fmt.Errorf("%s %d claims: %w", op, len(cs), err)
	}
	if len(failedClaims) == len(cs) && t.s.holdWrites(ctx, cs) {
		return nil
	}
	var names []string
	for i, c := range cs {
		if failedClaims[i] {
			names = append(names, c.Name)
		}
	}
	return &ClaimsError{Names: names, op: op, err: domain}
}

// claimTransactionAttempts bounds the tries of a claim transaction that collided with another one: more
// than other transactions get, since every write of a shard's claims also writes its change counter.
const claimTransactionAttempts = 8

// holdWrites reports whether every claim's item holds the claim's write id.
func (s *Store) holdWrites(ctx context.Context, cs []Claim) bool {
	for _, c := range cs {
		if !s.holdsWrite(ctx, claimPK(c.Name, c.Lifecycle == Deleted), c.Name, c.WriteID) {
			return false
		}
	}
	return true
}

// singleClaimError turns the *ClaimsError of a one-claim write into the error CreateClaim and PutClaim
// have always returned.
func singleClaimError(err error, op, name string) error {
	var ce *ClaimsError
	if errors.As(err, &ce) {
		return fmt.Errorf("%s claim %s: %w", op, name, ce.err)
	}
	return err
}
