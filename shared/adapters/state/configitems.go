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

const configPartition = "CONFIG"

// ConfigItem is one validated, defaulted configuration object (a NodePool or an EC2NodeClass) as the
// functions read it.
type ConfigItem struct {
	Kind string `dynamodbav:"kind"`
	Name string `dynamodbav:"name"`
	// DriftHash is the object's drift hash (NodePool template hash or EC2NodeClass static hash); claims
	// launched from an older hash have drifted.
	DriftHash string `dynamodbav:"driftHash"`
	// SpecHash is a digest of Spec; an apply whose SpecHash is unchanged writes nothing.
	SpecHash string `dynamodbav:"specHash"`
	// Spec is the validated, defaulted object as JSON.
	Spec string `dynamodbav:"spec"`
	// StaticPool says a NodePool is static (spec.replicas set). Karpenter refuses an update that turns a
	// pool static or dynamic; the CDK deployment's write is conditional on this attribute (absent: a
	// pool written before static pools existed, so dynamic).
	StaticPool bool      `dynamodbav:"staticPool,omitempty"` // StaticPoolAttr
	Version    int64     `dynamodbav:"version"`
	UpdatedAt  time.Time `dynamodbav:"updatedAt"`
	// WriteID identifies the write that stored this version (see newWriteID): a PutConfig whose answer
	// was lost and retried finds its own write, not someone else's.
	WriteID string `dynamodbav:"writeId,omitempty"`
}

// StaticPoolAttr is the attribute of ConfigItem.StaticPool.
const StaticPoolAttr = "staticPool"

// StaticPoolWriteCondition is the condition of a NodePool write that does not read the stored item first
// (the CDK deployment's updateItem): it refuses to turn a stored dynamic pool static (static true) or a
// static one dynamic, as Karpenter's CRD does. An item without StaticPoolAttr is dynamic. Names: #pk is
// PartitionKey, #static StaticPoolAttr; value :static is the written pool's StaticPool.
func StaticPoolWriteCondition(static bool) string {
	if static {
		return "attribute_not_exists(#pk) OR #static = :static"
	}
	return "attribute_not_exists(#pk) OR attribute_not_exists(#static) OR #static = :static"
}

// PutConfig writes item if the stored version is still item.Version (0: it must not exist yet) and returns
// it with the next version. ErrConflict when someone else wrote first.
func (s *Store) PutConfig(ctx context.Context, item ConfigItem) (ConfigItem, error) {
	if item.Kind == "" || item.Name == "" {
		return ConfigItem{}, fmt.Errorf("writing config: kind and name are required: %w", ErrInvalid)
	}
	expected := item.Version
	item.Version++
	item.UpdatedAt = s.now().UTC()
	item.WriteID = newWriteID()
	av, err := marshalItem(configPartition, item.Kind+"#"+item.Name, item)
	if err != nil {
		return ConfigItem{}, err
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}
	if expected == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
		in.ExpressionAttributeNames = map[string]string{"#pk": PartitionKey}
	} else {
		in.ConditionExpression = aws.String("#v = :v")
		in.ExpressionAttributeNames = map[string]string{"#v": "version"}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": num(expected)}
	}
	_, err = s.db.PutItem(ctx, in)
	if err := s.ownWrite(ctx, err, configPartition, item.Kind+"#"+item.Name, item.WriteID, ErrConflict, "writing %s %s", item.Kind, item.Name); err != nil {
		return ConfigItem{}, err
	}
	return item, nil
}

// GetConfig reads one configuration object. ErrNotFound if there is none.
func (s *Store) GetConfig(ctx context.Context, kind, name string) (ConfigItem, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(configPartition, kind+"#"+name), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return ConfigItem{}, fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	if out.Item == nil {
		return ConfigItem{}, fmt.Errorf("%s %s: %w", kind, name, ErrNotFound)
	}
	var c ConfigItem
	return c, unmarshal(out.Item, &c)
}

// ListConfig returns every configuration object of kind ("" for all kinds).
func (s *Store) ListConfig(ctx context.Context, kind string) ([]ConfigItem, error) {
	prefix := ""
	if kind != "" {
		prefix = kind + "#"
	}
	items, err := queryAll[ConfigItem](ctx, s.db, s.partition(configPartition, prefix))
	if err != nil {
		return nil, fmt.Errorf("listing config: %w", err)
	}
	return items, nil
}

// DeleteConfig removes a configuration object if it is still at version. Deleting one that is gone is
// not an error.
func (s *Store) DeleteConfig(ctx context.Context, kind, name string, version int64) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(configPartition, kind+"#"+name),
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #v = :v"),
		ExpressionAttributeNames:  map[string]string{"#pk": PartitionKey, "#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(version)},
	})
	return mapCondition(err, ErrConflict, "deleting %s %s", kind, name)
}

func unmarshal(item map[string]types.AttributeValue, v any) error {
	if err := attributevalue.UnmarshalMap(item, v); err != nil {
		return fmt.Errorf("decoding item: %w", err)
	}
	return nil
}
