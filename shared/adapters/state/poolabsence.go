package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const poolAbsencePartition = "POOLABSENCE"

// PoolAbsence is a NodePool the lifecycle passes have found missing from the configuration while claims
// of it are in service: since when, and in how many passes in a row. A pool back in the configuration has
// its absence cleared, so a missing item that comes back (a rollback, a construct moved in the CDK app)
// starts over.
type PoolAbsence struct {
	NodePool string    `dynamodbav:"sk"`
	Since    time.Time `dynamodbav:"since,unixtime"`
	Passes   int       `dynamodbav:"passes"`
}

// NotePoolAbsent records that a pass at at did not find nodePool in the configuration, and returns the
// absence so far: the first such pass sets Since, every pass counts.
func (s *Store) NotePoolAbsent(ctx context.Context, nodePool string, at time.Time) (PoolAbsence, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              key(poolAbsencePartition, nodePool),
		UpdateExpression: aws.String("SET since = if_not_exists(since, :at) ADD passes :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":at": num(at.Unix()), ":one": num(1),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return PoolAbsence{}, fmt.Errorf("noting NodePool %s missing: %w", nodePool, err)
	}
	var a PoolAbsence
	if err := attributevalue.UnmarshalMap(out.Attributes, &a); err != nil {
		return PoolAbsence{}, fmt.Errorf("decoding the absence of NodePool %s: %w", nodePool, err)
	}
	return a, nil
}

// PoolAbsences lists the NodePools found missing and not found again since (a small partition: only
// pools that went missing while they had claims).
func (s *Store) PoolAbsences(ctx context.Context) ([]PoolAbsence, error) {
	all, err := queryAll[PoolAbsence](ctx, s.db, s.partition(poolAbsencePartition, ""))
	if err != nil {
		return nil, fmt.Errorf("listing missing NodePools: %w", err)
	}
	out := all[:0]
	for _, a := range all {
		if a.Passes > 0 {
			out = append(out, a)
		}
	}
	return out, nil
}

// ClearPoolAbsence forgets that nodePool was missing: it is in the configuration again. The item stays,
// emptied (an update, so the lifecycle needs no delete permission); PoolAbsences skips it.
func (s *Store) ClearPoolAbsence(ctx context.Context, nodePool string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              key(poolAbsencePartition, nodePool),
		UpdateExpression: aws.String("REMOVE since, passes"),
	})
	if err != nil {
		return fmt.Errorf("clearing the absence of NodePool %s: %w", nodePool, err)
	}
	return nil
}
