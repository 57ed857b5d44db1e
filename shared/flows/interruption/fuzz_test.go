package interruption_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// seedBodies returns every interruption sample in events/ and every body of its SQS batches, the seed
// corpus that plain go test runs too.
func seedBodies(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, s := range eventSamples {
		seeds = append(seeds, readSample(f, s.file))
	}
	for _, name := range sqsSamples {
		var event events.SQSEvent
		if err := json.Unmarshal(readSample(f, name), &event); err != nil {
			f.Fatalf("reading %s: %v", name, err)
		}
		for _, r := range event.Records {
			seeds = append(seeds, []byte(r.Body))
		}
	}
	return seeds
}

// checkParse asserts what Parse promises for any input: a message or a typed error, never both, and a
// message that keeps the Message contract.
func checkParse(t *testing.T, body []byte) {
	msg, err := interruption.Parse(body)
	if err != nil {
		if msg != nil {
			t.Fatalf("both a message and an error: %v", err)
		}
		if !messages.IsMalformed(err) && !messages.IsUnknownKind(err) {
			t.Fatalf("untyped error: %v", err)
		}
		if err.Error() == "" {
			t.Fatal("empty error text")
		}
		return
	}
	if msg == nil {
		t.Fatal("neither a message nor an error")
	}
	if msg.EventID() == "" {
		t.Fatal("empty event id")
	}
	if msg.StartTime().IsZero() {
		t.Fatal("zero start time")
	}
	if !slices.Contains(messages.Kinds(), msg.Kind()) {
		t.Fatalf("unknown kind %q", msg.Kind())
	}
	ids := msg.InstanceIDs()
	if msg.Kind() == messages.NoOpKind {
		if len(ids) != 0 {
			t.Fatalf("no-op names instances %v", ids)
		}
		return
	}
	if len(ids) == 0 {
		t.Fatalf("%s message names no instance", msg.Kind())
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !messages.IsInstanceID(id) || seen[id] {
			t.Fatalf("bad or repeated instance id %q in %v", id, ids)
		}
		seen[id] = true
	}
}

func FuzzParse(f *testing.F) {
	for _, body := range seedBodies(f) {
		f.Add(body)
	}
	f.Add([]byte(``))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"detail":{}}`))
	f.Fuzz(checkParse)
}

func FuzzParseSQSEvent(f *testing.F) {
	for _, name := range sqsSamples {
		f.Add(readSample(f, name))
	}
	f.Add([]byte(`{"Records":[]}`))
	f.Add([]byte(`{"Records":[{"messageId":"m-1","body":"{}"}]}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var event events.SQSEvent
		if err := json.Unmarshal(payload, &event); err != nil {
			return // not an SQS event: nothing to check
		}
		results := interruption.ParseSQSEvent(event)
		if len(results) != len(event.Records) {
			t.Fatalf("%d results for %d records", len(results), len(event.Records))
		}
		for i, r := range results {
			if r.MessageID != event.Records[i].MessageId {
				t.Fatalf("result %d has message id %q, want %q", i, r.MessageID, event.Records[i].MessageId)
			}
			if (r.Message == nil) == (r.Err == nil) {
				t.Fatalf("result %d: message %v, error %v", i, r.Message, r.Err)
			}
			if r.Err != nil && !strings.Contains(r.Err.Error(), r.MessageID) {
				t.Fatalf("error does not name SQS message %q: %v", r.MessageID, r.Err)
			}
		}
	})
}
