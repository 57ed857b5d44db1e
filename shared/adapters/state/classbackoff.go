package state

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const classFailuresPartition = "CLASSBACKOFF"

// Launch back-off per EC2NodeClass: after n instances of a class died at launch (instance.DiedAtLaunch:
// a volume key the launching role may not use, a disabled key, a snapshot gone) since a node of the class
// last initialized, and with the class's spec unchanged since, nothing of the class is launched for
// min(ClassBackoffBase × 2^(n−1), ClassBackoffMax) after the last of them. Keeping one offering out
// (DiedAtLaunchTTL) only moves the next launch to the next offering, which dies the same way; the cause
// is the class's, so the class waits. The values are consolidation's replacement back-off's.
const (
	ClassBackoffBase = 5 * time.Minute
	ClassBackoffMax  = time.Hour
)

const (
	// classFailuresKept bounds the failures one item keeps (the newest); the delay is at its maximum long
	// before that many.
	classFailuresKept = 32
	// classFailuresRetention is how long an item outlives the end of its last back-off before DynamoDB's
	// TTL removes it; a class that has not failed for that long starts its count afresh.
	classFailuresRetention = 24 * time.Hour
	// classFailureMessageMax bounds a stored state-reason message.
	classFailureMessageMax = 512
	classFailuresAttempts  = 5
)

// LaunchFailure is one instance of an EC2NodeClass that EC2 terminated while launching it.
type LaunchFailure struct {
	InstanceID string
	At         time.Time
	// SpecHash is the class's drift hash the instance was launched with (Claim.NodeClassHash): failures
	// of an earlier spec do not hold back the class once an operator changed it.
	SpecHash string
	// Code and Message are EC2's state reason (Client.InvalidKMSKey.InvalidState, ...).
	Code, Message string
}

// ClassFailures are the launch failures recorded against one EC2NodeClass, oldest first.
type ClassFailures struct {
	NodeClass string
	Failures  []LaunchFailure
}

// ClassBackoff is an EC2NodeClass held back, and why.
type ClassBackoff struct {
	NodeClass string
	// Failures counts the distinct instances that died at launch since the class last had a node
	// initialize, with its current spec; Last is the newest of them.
	Failures int
	Last     LaunchFailure
	// Until is when the class may launch again.
	Until time.Time
}

func (b ClassBackoff) String() string {
	code := b.Last.Code
	if code == "" {
		code = "state reason not known yet"
	}
	return fmt.Sprintf("EC2NodeClass %s is backing off: %d instance(s) died at launch since a node of the class last initialized (last: %s, %s: %s); no launch before %s",
		b.NodeClass, b.Failures, b.Last.InstanceID, code, b.Last.Message, b.Until.UTC().Format(time.RFC3339))
}

// ClassBackoffDelay is how long a class waits after its n-th failure: min(ClassBackoffBase × 2^(n−1),
// ClassBackoffMax), nothing for n < 1.
func ClassBackoffDelay(n int) time.Duration {
	if n < 1 {
		return 0
	}
	if n > 7 {
		return ClassBackoffMax
	}
	return min(ClassBackoffBase<<(n-1), ClassBackoffMax)
}

// Backoff says whether the class is held back at now: the failures counted are those after since (the
// last time a node of the class initialized; zero for never) launched with specHash (the class's drift
// hash now; a failure or a class without a hash counts whatever the other's).
func (c ClassFailures) Backoff(specHash string, since, now time.Time) (ClassBackoff, bool) {
	b := ClassBackoff{NodeClass: c.NodeClass}
	for _, f := range c.Failures {
		if !f.At.After(since) || (specHash != "" && f.SpecHash != "" && f.SpecHash != specHash) {
			continue
		}
		b.Failures++
		if !f.At.Before(b.Last.At) {
			b.Last = f
		}
	}
	if b.Failures == 0 {
		return ClassBackoff{}, false
	}
	b.Until = b.Last.At.Add(ClassBackoffDelay(b.Failures))
	return b, now.Before(b.Until)
}

// ClassesInitializedAt is, per EC2NodeClass, the newest initialization among claims: what Backoff counts
// failures since.
func ClassesInitializedAt(claims []Claim) map[string]time.Time {
	out := map[string]time.Time{}
	for _, c := range claims {
		if c.InitializedAt != nil && c.InitializedAt.After(out[c.NodeClass]) {
			out[c.NodeClass] = *c.InitializedAt
		}
	}
	return out
}

// RecordLaunchFailure records that f's instance, of EC2NodeClass nodeClass, died at launch (f.At zero:
// now). It is idempotent per instance: both detectors (the interruption flow's state change and the
// lifecycle's sweep) may report the same instance, and a retried write counts once; recorded says
// whether this call added it. A report with a state reason completes an earlier one without. An item that cannot be decoded is replaced, starting the count afresh.
func (s *Store) RecordLaunchFailure(ctx context.Context, nodeClass string, f LaunchFailure) (recorded bool, err error) {
	if nodeClass == "" || f.InstanceID == "" {
		return false, fmt.Errorf("recording a launch failure: EC2NodeClass %q, instance %q: %w", nodeClass, f.InstanceID, ErrInvalid)
	}
	if f.At.IsZero() {
		f.At = s.now()
	}
	if len(f.Message) > classFailureMessageMax {
		f.Message = f.Message[:classFailureMessageMax]
	}
	k := key(classFailuresPartition, nodeClass)
	for range classFailuresAttempts {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: k, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, fmt.Errorf("reading the launch failures of EC2NodeClass %s: %w", nodeClass, err)
		}
		cur, derr := decodeClassFailures(nodeClass, out.Item)
		if derr != nil || expired(out.Item, s.now()) {
			cur = ClassFailures{NodeClass: nodeClass} // unreadable, or past its ttl but not deleted yet: afresh
		}
		i := slices.IndexFunc(cur.Failures, func(g LaunchFailure) bool { return g.InstanceID == f.InstanceID })
		switch {
		case i >= 0 && (cur.Failures[i].Code != "" || f.Code == ""):
			return false, nil
		case i >= 0:
			// The interruption flow's notice carries no state reason; the lifecycle's sweep, which asks
			// EC2, fills it in later without counting the instance again.
			cur.Failures[i].Code, cur.Failures[i].Message = f.Code, f.Message
		default:
			cur.Failures = append(cur.Failures, f)
		}
		slices.SortStableFunc(cur.Failures, func(a, b LaunchFailure) int { return a.At.Compare(b.At) })
		if n := len(cur.Failures); n > classFailuresKept {
			cur.Failures = cur.Failures[n-classFailuresKept:]
		}
		item := encodeClassFailures(cur)
		for kk, v := range k {
			item[kk] = v
		}
		in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item, ExpressionAttributeNames: map[string]string{"#v": "version"}}
		if old, ok := out.Item["version"]; ok {
			in.ConditionExpression = aws.String("#v = :v")
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": old}
			v, _ := numberAttr(out.Item, "version") // a version that is not a number starts again at 1
			item["version"] = num(v + 1)
		} else {
			in.ConditionExpression = aws.String("attribute_not_exists(#v)")
			item["version"] = num(1)
		}
		_, err = s.db.PutItem(ctx, in)
		if conditionFailed(err) {
			continue // another detector wrote meanwhile: read again
		}
		if err != nil {
			return false, fmt.Errorf("recording a launch failure of EC2NodeClass %s: %w", nodeClass, err)
		}
		return i < 0, nil
	}
	return false, fmt.Errorf("recording a launch failure of EC2NodeClass %s: %w", nodeClass, ErrConflict)
}

// ClassFailures reads the launch failures of every EC2NodeClass that has any (one query of a partition
// that is empty unless instances died at launch lately). An item that cannot be decoded is left out and
// named in invalid, with the field at fault; the others are returned. err is for the read itself.
func (s *Store) ClassFailures(ctx context.Context) (records []ClassFailures, invalid []error, err error) {
	p := dynamodb.NewQueryPaginator(s.db, s.partition(classFailuresPartition, ""))
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the launch failures of EC2NodeClasses: %w", err)
		}
		for _, item := range page.Items {
			name := ""
			if sk, ok := item[SortKey].(*types.AttributeValueMemberS); ok {
				name = sk.Value
			}
			c, err := decodeClassFailures(name, item)
			if err != nil {
				invalid = append(invalid, err)
				continue
			}
			records = append(records, c)
		}
	}
	return records, invalid, nil
}

// encodeClassFailures is the item of c, without its key and version: failures as a map by instance id.
func encodeClassFailures(c ClassFailures) map[string]types.AttributeValue {
	failures := map[string]types.AttributeValue{}
	var last time.Time
	for _, f := range c.Failures {
		failures[f.InstanceID] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"at": num(f.At.UnixMilli()), "hash": str(f.SpecHash), "code": str(f.Code), "message": str(f.Message),
		}}
		if f.At.After(last) {
			last = f.At
		}
	}
	return map[string]types.AttributeValue{
		"failures":   &types.AttributeValueMemberM{Value: failures},
		TTLAttribute: num(last.Add(ClassBackoffMax + classFailuresRetention).Unix()),
	}
}

// decodeClassFailures reads the item of nodeClass (nil: none recorded); an error names the field at
// fault and wraps ErrInvalid.
func decodeClassFailures(nodeClass string, item map[string]types.AttributeValue) (ClassFailures, error) {
	c := ClassFailures{NodeClass: nodeClass}
	if item == nil {
		return c, nil
	}
	bad := func(field, why string) error {
		return fmt.Errorf("launch failures of EC2NodeClass %q: field %s: %s: %w", nodeClass, field, why, ErrInvalid)
	}
	if nodeClass == "" {
		return c, bad(SortKey, "not a non-empty string")
	}
	m, ok := item["failures"].(*types.AttributeValueMemberM)
	if !ok {
		return c, bad("failures", "not a map")
	}
	for id, v := range m.Value {
		fm, ok := v.(*types.AttributeValueMemberM)
		if !ok {
			return c, bad("failures."+id, "not a map")
		}
		f := LaunchFailure{InstanceID: id}
		at, ok := fm.Value["at"].(*types.AttributeValueMemberN)
		if !ok {
			return c, bad("failures."+id+".at", "not a number")
		}
		ms, err := strconv.ParseInt(at.Value, 10, 64)
		if err != nil || ms <= 0 {
			return c, bad("failures."+id+".at", fmt.Sprintf("%q is not a time in Unix milliseconds", at.Value))
		}
		f.At = time.UnixMilli(ms).UTC()
		for field, dst := range map[string]*string{"hash": &f.SpecHash, "code": &f.Code, "message": &f.Message} {
			switch s := fm.Value[field].(type) {
			case nil:
			case *types.AttributeValueMemberS:
				*dst = s.Value
			default:
				return c, bad("failures."+id+"."+field, "not a string")
			}
		}
		c.Failures = append(c.Failures, f)
	}
	slices.SortStableFunc(c.Failures, func(a, b LaunchFailure) int {
		if d := a.At.Compare(b.At); d != 0 {
			return d
		}
		return cmp.Compare(a.InstanceID, b.InstanceID)
	})
	return c, nil
}

// expired reports whether item has a ttl that has passed at now.
func expired(item map[string]types.AttributeValue, now time.Time) bool {
	ttl, err := numberAttr(item, TTLAttribute)
	return err == nil && ttl > 0 && ttl <= now.Unix()
}
