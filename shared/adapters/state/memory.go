package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// memoryPartition holds one item per (instance type, AMI): the memory capacity a registered Node of
// that type, launched from that AMI, reported. One item per pair a NodePool launched within
// MemoryObservationTTL: hundreds at most, a page or two of one query.
const memoryPartition = "MEMORY"

// MemoryObservationTTL is how long an observation is used after it was last recorded: Karpenter keeps
// the memory it discovered on real nodes for 60 days.
const MemoryObservationTTL = 60 * 24 * time.Hour

// MemoryRefreshAfter is how old an observation must be before seeing the same value again writes it
// anew (to push its expiry back): at most once a day per (instance type, AMI).
const MemoryRefreshAfter = 24 * time.Hour

// MemoryObservation is the memory capacity (status.capacity.memory) a registered Node reported for an
// instance type launched from an AMI. When several Nodes reported, the smallest value stands: planning
// with it never places pods on a node that cannot hold them.
type MemoryObservation struct {
	InstanceType string `dynamodbav:"instanceType"`
	ImageID      string `dynamodbav:"imageId"`
	// MemoryBytes is the Node's status.capacity.memory.
	MemoryBytes int64 `dynamodbav:"memoryBytes"`
	// NominalMiB and Architecture are the type's instance-memory and arch labels, for showing the
	// estimate beside the observation (0 and "" when the claim did not record them).
	NominalMiB   int64  `dynamodbav:"nominalMiB,omitempty"`
	Architecture string `dynamodbav:"architecture,omitempty"`
	// Node is the Node that reported it.
	Node       string    `dynamodbav:"node,omitempty"`
	ObservedAt time.Time `dynamodbav:"observedAt"`
	TTL        int64     `dynamodbav:"ttl"`
}

// Key is the observation's sort key: instance type and AMI.
func (o MemoryObservation) Key() string { return o.InstanceType + "#" + o.ImageID }

// Expires is when the observation stops being used.
func (o MemoryObservation) Expires() time.Time { return time.Unix(o.TTL, 0) }

// RecordMemory stores o (ObservedAt and the expiry are set from the store's clock) unless the stored
// observation of the same instance type and AMI is smaller, or equal and recorded within
// MemoryRefreshAfter: one conditional put, so overlapping writers keep the smallest value. written says
// whether it was stored.
func (s *Store) RecordMemory(ctx context.Context, o MemoryObservation) (written bool, err error) {
	if o.InstanceType == "" || o.ImageID == "" || o.MemoryBytes <= 0 {
		return false, fmt.Errorf("recording observed memory: instance type, image id and a positive memory are required (got %q, %q, %d): %w",
			o.InstanceType, o.ImageID, o.MemoryBytes, ErrInvalid)
	}
	now := s.now().UTC()
	o.ObservedAt, o.TTL = now, now.Add(MemoryObservationTTL).Unix()
	item, err := marshalItem(memoryPartition, o.Key(), o)
	if err != nil {
		return false, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk) OR #m > :m OR (#m = :m AND #ttl < :refresh)"),
		ExpressionAttributeNames: map[string]string{"#pk": PartitionKey, "#m": "memoryBytes", "#ttl": TTLAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": num(o.MemoryBytes),
			":refresh": num(now.Add(MemoryObservationTTL - MemoryRefreshAfter).Unix())},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("recording observed memory of %s on %s: %w", o.InstanceType, o.ImageID, err)
	}
	return true, nil
}

// MemoryObservations returns the observations not expired: one query of their partition (an item per
// instance type and AMI launched within MemoryObservationTTL, hundreds at most). DynamoDB deletes expired
// items within days, so they are filtered here too.
func (s *Store) MemoryObservations(ctx context.Context) ([]MemoryObservation, error) {
	all, err := queryAll[MemoryObservation](ctx, s.db, s.partition(memoryPartition, ""))
	if err != nil {
		return nil, fmt.Errorf("reading observed memory: %w", err)
	}
	now := s.now().Unix()
	live := all[:0]
	for _, o := range all {
		if o.TTL > now {
			live = append(live, o)
		}
	}
	return live, nil
}
