package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const disruptionCommandPartition = "DISRUPTION"

// FinishedCommandRetention is how long a finished (or rolled back) disruption command stays readable.
const FinishedCommandRetention = 7 * 24 * time.Hour

// CommandPhase is where a disruption command is in its execution.
type CommandPhase string

const (
	// CommandLaunching: the disrupted nodes are tainted and the replacements are launching; nothing is
	// drained until every replacement has initialized.
	CommandLaunching CommandPhase = "launching"
	// CommandTerminating: termination requests were sent for every disrupted claim; the command is
	// finished once they are all deleted.
	CommandTerminating CommandPhase = "terminating"
	// CommandDone: every disrupted claim is gone.
	CommandDone CommandPhase = "done"
	// CommandRolledBack: the command was called off (a replacement failed or timed out); taints lifted.
	CommandRolledBack CommandPhase = "rolledBack"
)

// Active reports whether the command still holds its nodes (launching or terminating).
func (p CommandPhase) Active() bool { return p == CommandLaunching || p == CommandTerminating }

// DisruptedClaim is one node a disruption command removes.
type DisruptedClaim struct {
	Claim    string `dynamodbav:"claim"`
	Node     string `dynamodbav:"node"`
	NodePool string `dynamodbav:"nodePool"`
}

// ReplacementFailure is a replacement that failed: its NodePool, the AMI it launched with ("" when no
// instance was launched), and when the failure was seen.
type ReplacementFailure struct {
	NodePool string    `dynamodbav:"nodePool"`
	ImageID  string    `dynamodbav:"imageId,omitempty"`
	At       time.Time `dynamodbav:"at"`
}

// DisruptionCommand is the record of one consolidation command being carried out, so a later run (after
// a crash, or the next minute) advances it: waits for its replacements, hands its nodes to termination,
// or rolls it back.
type DisruptionCommand struct {
	ID     string       `dynamodbav:"id"`
	Phase  CommandPhase `dynamodbav:"phase"`
	Reason string       `dynamodbav:"reason"`
	Method string       `dynamodbav:"method"`
	Action string       `dynamodbav:"action"`
	// Candidates are the disrupted nodes; Replacements the names of the claims launched in their place.
	Candidates   []DisruptedClaim `dynamodbav:"candidates"`
	Replacements []string         `dynamodbav:"replacements,omitempty"`
	// SavingsPerHour and Why are the engine's, for explain.
	SavingsPerHour float64   `dynamodbav:"savingsPerHour"`
	Why            string    `dynamodbav:"why,omitempty"`
	StartedAt      time.Time `dynamodbav:"startedAt"`
	// HandedOverAt is when the disrupted claims were sent to the termination flow.
	HandedOverAt *time.Time `dynamodbav:"handedOverAt,omitempty"`
	FinishedAt   *time.Time `dynamodbav:"finishedAt,omitempty"`
	// Outcome says how the command ended (rolled back: why).
	Outcome string `dynamodbav:"outcome,omitempty"`
	// ReplacementFailure is set when a replacement failed to launch or to initialize in time: the
	// disruption run backs off replacements in that NodePool and image from the recent failures.
	ReplacementFailure *ReplacementFailure `dynamodbav:"replacementFailure,omitempty"`
	Version            int64               `dynamodbav:"version"`
	TTL                int64               `dynamodbav:"ttl,omitempty"`
	// WriteID identifies the write that stored this version (see newWriteID).
	WriteID string `dynamodbav:"writeId,omitempty"`
}

// CreateDisruptionCommand writes a new command (version 1). ErrAlreadyExists if one has that id.
func (s *Store) CreateDisruptionCommand(ctx context.Context, c DisruptionCommand) (DisruptionCommand, error) {
	if c.ID == "" || c.Phase == "" {
		return DisruptionCommand{}, fmt.Errorf("creating disruption command: id and phase are required: %w", ErrInvalid)
	}
	if c.StartedAt.IsZero() {
		c.StartedAt = s.now().UTC()
	}
	c.Version, c.WriteID = 1, newWriteID()
	item, err := marshalItem(disruptionCommandPartition, c.ID, c)
	if err != nil {
		return DisruptionCommand{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": PartitionKey},
	})
	if err := s.ownWrite(ctx, err, disruptionCommandPartition, c.ID, c.WriteID, ErrAlreadyExists, "creating disruption command %s", c.ID); err != nil {
		return DisruptionCommand{}, err
	}
	return c, nil
}

// PutDisruptionCommand writes c if the stored version is still c.Version and returns it with the next
// version; ErrConflict if someone else wrote in between. A command that leaves the active phases gets
// its FinishedAt and expires after FinishedCommandRetention.
func (s *Store) PutDisruptionCommand(ctx context.Context, c DisruptionCommand) (DisruptionCommand, error) {
	old := c.Version
	if !c.Phase.Active() {
		if c.FinishedAt == nil {
			now := s.now().UTC()
			c.FinishedAt = &now
		}
		c.TTL = c.FinishedAt.Add(FinishedCommandRetention).Unix()
	}
	c.Version, c.WriteID = old+1, newWriteID()
	item, err := marshalItem(disruptionCommandPartition, c.ID, c)
	if err != nil {
		return DisruptionCommand{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(old)},
	})
	if err := s.ownWrite(ctx, err, disruptionCommandPartition, c.ID, c.WriteID, ErrConflict, "updating disruption command %s", c.ID); err != nil {
		return DisruptionCommand{}, err
	}
	return c, nil
}

// ListDisruptionCommands returns every disruption command record (finished ones until they expire).
func (s *Store) ListDisruptionCommands(ctx context.Context) ([]DisruptionCommand, error) {
	out, err := queryAll[DisruptionCommand](ctx, s.db, s.partition(disruptionCommandPartition, ""))
	if err != nil {
		return nil, fmt.Errorf("listing disruption commands: %w", err)
	}
	now := s.now().Unix()
	live := out[:0]
	for _, c := range out {
		if c.TTL == 0 || c.TTL > now {
			live = append(live, c)
		}
	}
	return live, nil
}
