package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attrWriteID is the attribute a conditional write stores its write id in.
const attrWriteID = "writeId"

// newWriteID draws the id a conditional write records with its item.
//
// The SDK retries a request whose answer was lost (a reset connection, a timeout). When the lost
// attempt had succeeded, the retry fails the very condition that success changed: a create finds the
// item it made, a versioned put finds the version it wrote. Without a way to tell, the writer would take
// its own write for someone else's — a launch would draw another claim name and leave an orphan pending
// claim behind. The write id tells: after a failed condition, an item that holds this write's id is this
// write, and the write succeeded.
func newWriteID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// holdsWrite reports whether the item pk/sk holds the write writeID (read strongly consistent). A read
// that fails answers false: the caller then reports the condition failure it had.
func (s *Store) holdsWrite(ctx context.Context, pk, sk, writeID string) bool {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#w"),
		ExpressionAttributeNames: map[string]string{"#w": attrWriteID},
	})
	if err != nil || out.Item == nil {
		return false
	}
	got, ok := out.Item[attrWriteID].(*types.AttributeValueMemberS)
	return ok && writeID != "" && got.Value == writeID
}

// ownWrite is mapCondition for a conditional write that recorded writeID: a condition failure on an
// item that already holds writeID is the write's own earlier attempt, so the write succeeded (nil).
func (s *Store) ownWrite(ctx context.Context, err error, pk, sk, writeID string, domain error, format string, args ...any) error {
	if err != nil && conditionFailed(err) && s.holdsWrite(ctx, pk, sk, writeID) {
		return nil
	}
	return mapCondition(err, domain, format, args...)
}
