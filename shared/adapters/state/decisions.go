package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DecisionRetention is how long decision records stay readable.
const DecisionRetention = 14 * 24 * time.Hour

// UnschedulableSubject is the subject of the provisioner's summaries of the pods it cannot provision, one
// record per reason per run ("1,412 pods: …", with a sample of their names): past a per-run cap, a pod
// has no record of its own, and `nodewright explain pod/…` shows these instead.
const UnschedulableSubject = "unschedulable/pods"

// maxDecisionText bounds a decision's message and each detail, so a record always fits in one item.
const maxDecisionText = 8 * 1024

// Decision records why Nodewright did or did not act: a launch, a skip, a block, a disruption.
type Decision struct {
	// Subject is what the decision is about: "pod/<ns>/<name>", "nodeclaim/<name>", "nodepool/<name>".
	Subject string `dynamodbav:"subject"`
	ID      string `dynamodbav:"id"`
	// Kind is the decision's category, e.g. Launch, CannotProvision, DisruptionBlocked, Disrupt.
	Kind    string            `dynamodbav:"kind"`
	Reason  string            `dynamodbav:"reason"`
	Message string            `dynamodbav:"message,omitempty"`
	Details map[string]string `dynamodbav:"details,omitempty"`
	At      time.Time         `dynamodbav:"at"`
	// Truncated is set when the message or details were cut to fit the item size limit.
	Truncated bool  `dynamodbav:"truncated,omitempty"`
	TTL       int64 `dynamodbav:"ttl"`
}

// RecordDecision stores d under its subject for DecisionRetention. Text over the bounds is cut and the
// record marked Truncated rather than refused: losing the tail of a message beats losing the decision.
func (s *Store) RecordDecision(ctx context.Context, d Decision) error {
	item, err := s.decisionItem(d)
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("recording decision %s for %s: %w", d.ID, d.Subject, err)
	}
	return nil
}

// decisionItem validates d, fills in its time and expiry, cuts its text to fit and encodes it.
func (s *Store) decisionItem(d Decision) (map[string]types.AttributeValue, error) {
	if d.Subject == "" || d.ID == "" || d.Kind == "" {
		return nil, fmt.Errorf("recording decision: subject, id and kind are required: %w", ErrInvalid)
	}
	if d.At.IsZero() {
		d.At = s.now().UTC()
	}
	d.TTL = d.At.Add(DecisionRetention).Unix()
	d.Message, d.Truncated = truncate(d.Message, maxDecisionText, d.Truncated)
	details := make(map[string]string, len(d.Details)) // the caller's map is left as it is
	for k, v := range d.Details {
		details[k], d.Truncated = truncate(v, maxDecisionText, d.Truncated)
	}
	if s.priceNote != "" && restsOnPrices(details) {
		details[DetailPrices] = s.priceNote
	}
	d.Details = details
	if len(d.Details) == 0 {
		d.Details = nil
	}
	item, err := marshalItem("DECISION#"+d.Subject, fmt.Sprintf("%013d#%s", d.At.UnixMilli(), d.ID), d)
	for errors.Is(err, ErrItemTooLarge) && len(d.Details) > 0 {
		for k := range d.Details { // drop details until it fits
			delete(d.Details, k)
			break
		}
		d.Truncated = true
		item, err = marshalItem("DECISION#"+d.Subject, fmt.Sprintf("%013d#%s", d.At.UnixMilli(), d.ID), d)
	}
	return item, err
}

// Decisions returns up to limit of subject's decisions, newest first.
func (s *Store) Decisions(ctx context.Context, subject string, limit int) ([]Decision, error) {
	in := s.partition("DECISION#"+subject, "")
	in.ScanIndexForward = aws.Bool(false)
	var out []Decision
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() && len(out) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading decisions of %s: %w", subject, err)
		}
		batch, err := decodeAll[Decision](page.Items)
		if err != nil {
			return nil, err
		}
		now := s.now().Unix()
		for _, d := range batch {
			if d.TTL > now && len(out) < limit {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

func truncate(s string, max int, already bool) (string, bool) {
	if len(s) <= max {
		return s, already
	}
	return s[:max], true
}

func decodeAll[T any](items []map[string]types.AttributeValue) ([]T, error) {
	var out []T
	for _, it := range items {
		var v T
		if err := unmarshal(it, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
