package state

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// legacyClaimPartition is the one partition every claim lived in before claims were sharded.
const legacyClaimPartition = "CLAIM"

// migrateLegacyClaims moves the claims still in the legacy partition (written before an upgrade, or by
// a function still running the previous version during the deploy) to their shards, each in a
// transaction that deletes the legacy item (if its version is unchanged), writes the claim to its live
// or deleted shard (unless a claim of that name is there already) and moves the live shard's counter.
// Every claim listing runs it first, so a legacy claim is never missed; with nothing to move it costs one
// query of an empty partition. A claim already in its shard (migrated by another function, or rebuilt by
// reconciliation) wins, and the legacy item is dropped.
// It returns the read units of the query.
func (s *Store) migrateLegacyClaims(ctx context.Context) (float64, error) {
	items, units, err := s.queryItems(ctx, s.partition(legacyClaimPartition, ""))
	if err != nil {
		return units, fmt.Errorf("reading claims written before sharding: %w", err)
	}
	for _, legacy := range items {
		var c Claim
		if err := attributevalue.UnmarshalMap(legacy, &c); err != nil {
			return units, fmt.Errorf("decoding a claim written before sharding: %w", err)
		}
		if err := s.migrateLegacyClaim(ctx, c); err != nil {
			return units, err
		}
	}
	return units, nil
}

func (s *Store) migrateLegacyClaim(ctx context.Context, c Claim) error {
	deleted := c.Lifecycle == Deleted
	item, err := marshalItem(claimPK(c.Name, deleted), c.Name, c)
	if err != nil {
		return err
	}
	// Its replacement markers first, as a create writes them (one PutItem each: they are few, and every
	// function that lists claims may be the one that moves them).
	for _, replaced := range c.Replaces {
		marker := key(replacedByPrefix+replaced, c.Name)
		marker[TTLAttribute] = num(s.now().Add(DeletedClaimRetention).Unix())
		if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: marker}); err != nil {
			return fmt.Errorf("marking the claims claim %s replaces: %w", c.Name, err)
		}
	}
	t := s.newClaimTxn()
	t.add(0, types.TransactWriteItem{Delete: &types.Delete{
		TableName: aws.String(s.table), Key: key(legacyClaimPartition, c.Name),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(c.Version)},
	}})
	t.add(0, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": PartitionKey},
	}})
	t.touch(c.Name, deleted, item)
	err = t.run(ctx, "moving to its shard", []Claim{c}, ErrConflict)
	if err == nil || !IsConflict(err) {
		return err
	}
	// The legacy item changed (a function of the previous version wrote it: the next listing moves it)
	// or the shard holds the claim already: drop the legacy item in that case only.
	if _, err := s.GetClaim(ctx, c.Name); err != nil {
		return IgnoreNotFound(err)
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: key(legacyClaimPartition, c.Name),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(c.Version)},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("dropping the legacy record of claim %s, already in its shard: %w", c.Name, err)
	}
	return nil
}
