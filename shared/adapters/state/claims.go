package state

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// ExpireNever is Claim.ExpireAfter for a NodePool whose expireAfter is "Never".
const ExpireNever = "Never"

// DeletedClaimRetention is how long a deleted claim's record stays readable (for explain and audits).
const DeletedClaimRetention = 7 * 24 * time.Hour

// Claim is the record of one NodeClaim: what was asked for, what was launched, and where it is in its life.
type Claim struct {
	Name          string    `dynamodbav:"name"`
	NodePool      string    `dynamodbav:"nodePool"`
	NodeClass     string    `dynamodbav:"nodeClass,omitempty"`
	Lifecycle     Lifecycle `dynamodbav:"lifecycle"`
	Version       int64     `dynamodbav:"version"`
	TemplateHash  string    `dynamodbav:"templateHash,omitempty"`
	NodeClassHash string    `dynamodbav:"nodeClassHash,omitempty"`
	// TemplateHashVersion and NodeClassHashVersion are the hash versions (apis.NodePoolHashVersion,
	// apis.EC2NodeClassHashVersion) the two hashes were computed with: a hash of another version than the
	// current one is re-stamped, not read as drift. Empty on claims written before they were recorded.
	TemplateHashVersion  string `dynamodbav:"templateHashVersion,omitempty"`
	NodeClassHashVersion string `dynamodbav:"nodeClassHashVersion,omitempty"`

	// ExpireAfter is the NodePool template's expireAfter when the claim was launched, as Karpenter copies
	// it onto the NodeClaim: a Go duration ("720h0m0s"), ExpireNever, or empty when it was not recorded
	// (claims written before it was, and rebuilt ones). A NodePool edit does not change it.
	ExpireAfter string `dynamodbav:"expireAfter,omitempty"`
	// TerminationGracePeriod is the NodePool template's terminationGracePeriod when the claim was
	// launched: how long a drain may take before do-not-disrupt pods and PDBs no longer hold it. Nil when
	// the template has none (or it was not recorded).
	TerminationGracePeriod *time.Duration `dynamodbav:"terminationGracePeriod,omitempty"`

	// Requests is what the scheduler packed onto the claim (resource name → quantity).
	Requests map[string]string `dynamodbav:"requests,omitempty"`
	// InstanceTypes are the options handed to the launch, cheapest first.
	InstanceTypes []string `dynamodbav:"instanceTypes,omitempty"`
	// ReservationID is the capacity reservation the scheduler counted the claim against, if any: until
	// its launch is answered, the next solves count that instance as taken.
	ReservationID string `dynamodbav:"reservationId,omitempty"`
	// Batch is the id of the batched CreateFleet that launches the claim with others identical to it,
	// recorded before the call; empty for a claim launched alone. The batch's instances carry it in their
	// nodewright.sh/launch-batch tag until each is tagged with its claim, so reconciliation can pair them.
	Batch string `dynamodbav:"batch,omitempty"`
	// MinValuesRelaxed says whether the scheduler lowered a requirement's minValues to launch the claim
	// (MIN_VALUES_POLICY BestEffort); its Node is annotated karpenter.sh/nodeclaim-min-values-relaxed with
	// it, as Karpenter annotates every NodeClaim. Nil for claims recorded before it was.
	MinValuesRelaxed *bool `dynamodbav:"minValuesRelaxed,omitempty"`
	// PriceOverlayApplied and CapacityOverlayApplied say that a NodeOverlay priced, or set extended
	// resources of, one of the claim's instance types; its Node is annotated
	// karpenter.sh/price-overlay-applied and karpenter.sh/capacity-overlay-applied "true", as Karpenter
	// annotates the NodeClaim (and so its Node).
	PriceOverlayApplied    bool `dynamodbav:"priceOverlayApplied,omitempty"`
	CapacityOverlayApplied bool `dynamodbav:"capacityOverlayApplied,omitempty"`
	// Labels are every label the claim's Node will carry, as Karpenter sets them on a NodeClaim: the
	// NodePool's template labels, its nodepool and node-class labels, the requirement values the pods
	// packed on the claim narrowed to one (team=a from a pool's "team Exists" and a pod's nodeSelector),
	// and, once the launch has answered, the instance type's labels (instance-family, -cpu, -memory...),
	// zone, zone id and capacity type. Registration puts them on the Node; in-flight accounting matches
	// pods against them.
	Labels map[string]string `dynamodbav:"labels,omitempty"`

	// Replaces names the claims this one was launched to replace (a consolidation's replacement, or a
	// provisioning run's launch for the pods of draining Nodes); their drains wait for it to initialize
	// (termination's gate), and the churn guard keeps such a node from being replaced again within its
	// NodePool's consolidateAfter.
	Replaces []string `dynamodbav:"replaces,omitempty"`

	// Filled by the launch.
	InstanceID   string  `dynamodbav:"instanceId,omitempty"` // sparse key of IndexByInstance
	InstanceType string  `dynamodbav:"instanceType,omitempty"`
	Zone         string  `dynamodbav:"zone,omitempty"`
	CapacityType string  `dynamodbav:"capacityType,omitempty"`
	PricePerHour float64 `dynamodbav:"pricePerHour,omitempty"`
	ProviderID   string  `dynamodbav:"providerId,omitempty"`
	// ImageID, SubnetID and SecurityGroupIDs are the AMI, subnet and security groups the instance was
	// launched with (AMI, subnet and security-group drift compare them with what the EC2NodeClass
	// selects now). Empty when unknown: such a claim is never judged drifted on them.
	ImageID          string   `dynamodbav:"imageId,omitempty"`
	SubnetID         string   `dynamodbav:"subnetId,omitempty"`
	SecurityGroupIDs []string `dynamodbav:"securityGroupIds,omitempty"`
	// Filled by registration.
	NodeName string `dynamodbav:"nodeName,omitempty"`
	// Drifted is the claim's Drifted condition (nil: not drifted, or never judged); DisruptionRequest is
	// set by `nodewright disrupt`. See claimdisruption.go.
	Drifted           *DriftCondition    `dynamodbav:"drifted,omitempty"`
	DisruptionRequest *DisruptionRequest `dynamodbav:"disruptionRequest,omitempty"`
	// Disrupting is set while a disruption command holds the claim as a candidate, before it drains.
	Disrupting *DisruptingMark `dynamodbav:"disrupting,omitempty"`
	// Consolidatable is set while the claim's node has had no pod event for its NodePool's
	// consolidateAfter (the disruption run sets and clears it).
	Consolidatable *ConsolidatableMark `dynamodbav:"consolidatable,omitempty"`
	// DisruptionReason says why the claim is draining or terminating (Drifted, Expired, Interrupted, ...).
	DisruptionReason string `dynamodbav:"disruptionReason,omitempty"`
	// GoneBy is when the instance will be gone whatever budgets and do-not-disrupt say (the earliest
	// deadline of an interruption notice); every pod must be off the Node by then. Nil when no notice set one.
	GoneBy *time.Time `dynamodbav:"goneBy,omitempty"`
	// TerminationSentAt is when the lifecycle last handed the claim to the termination flow (its Node was
	// deleted, its NodePool removed, or its drain stalled), or the disruption run did because its capacity
	// block ends; TerminationSends counts those hand-overs. The sender writes both, with the version check,
	// before it sends, so overlapping passes send once.
	TerminationSentAt *time.Time `dynamodbav:"terminationSentAt,omitempty"`
	TerminationSends  int        `dynamodbav:"terminationSends,omitempty"`
	// NodeLostAt is when a lifecycle pass, on a whole read, first found the Node of this registered or
	// initialized claim gone while its instance still runs (a Node deleted with its finalizer stripped);
	// nil while the Node is there. The claim stands for no capacity from then on, and is handed to the
	// termination flow once its Node has stayed away for reconcile.NodeLostGrace.
	NodeLostAt *time.Time `dynamodbav:"nodeLostAt,omitempty"`
	// TerminationChain names the termination request chain (a request and its re-drives) that works on
	// the claim: the newest one started. A re-drive of an older chain ends there, so however often a
	// termination is requested again, one chain per claim looks at its drain.
	TerminationChain string `dynamodbav:"terminationChain,omitempty"`

	CreatedAt     time.Time  `dynamodbav:"createdAt"`
	LaunchedAt    *time.Time `dynamodbav:"launchedAt,omitempty"`
	RegisteredAt  *time.Time `dynamodbav:"registeredAt,omitempty"`
	InitializedAt *time.Time `dynamodbav:"initializedAt,omitempty"`
	DrainingAt    *time.Time `dynamodbav:"drainingAt,omitempty"`
	TerminatingAt *time.Time `dynamodbav:"terminatingAt,omitempty"`
	DeletedAt     *time.Time `dynamodbav:"deletedAt,omitempty"`

	// TTL is set when the claim is deleted, so the record expires after DeletedClaimRetention.
	TTL int64 `dynamodbav:"ttl,omitempty"`
	// WriteID identifies the write that stored this version (see newWriteID); every create and put draws
	// a new one.
	WriteID string `dynamodbav:"writeId,omitempty"`
}

// CreateClaim writes a new claim record (lifecycle pending, version 1). It is the first side effect of a
// launch: the claim exists before EC2 is called. ErrAlreadyExists if a claim of that name exists, deleted
// ones included until they expire (not when the SDK retried this create after a lost answer: see
// newWriteID).
func (s *Store) CreateClaim(ctx context.Context, c Claim) (Claim, error) {
	out, err := s.CreateClaims(ctx, []Claim{c})
	if err != nil {
		return Claim{}, singleClaimError(err, "creating", c.Name)
	}
	return out[0], nil
}

// newClaimItem fills in a new claim (pending unless set, created now unless set, version 1, a new write
// id) and encodes it.
func (s *Store) newClaimItem(c Claim) (Claim, map[string]types.AttributeValue, error) {
	if c.Name == "" || c.NodePool == "" {
		return Claim{}, nil, fmt.Errorf("creating claim: name and nodePool are required: %w", ErrInvalid)
	}
	if c.Lifecycle == "" {
		c.Lifecycle = Pending
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now().UTC()
	}
	c.Version, c.WriteID = 1, newWriteID()
	item, err := marshalItem(claimPK(c.Name, c.Lifecycle == Deleted), c.Name, c)
	return c, item, err
}

// GetClaim reads a claim (strongly consistent), live or deleted (until it expires). ErrNotFound if there
// is none.
func (s *Store) GetClaim(ctx context.Context, name string) (Claim, error) {
	for _, deleted := range []bool{false, true} {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: key(claimPK(name, deleted), name), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return Claim{}, fmt.Errorf("reading claim %s: %w", name, err)
		}
		if out.Item == nil {
			continue
		}
		var c Claim
		if err := attributevalue.UnmarshalMap(out.Item, &c); err != nil {
			return Claim{}, fmt.Errorf("decoding claim %s: %w", name, err)
		}
		if s.expired(c) {
			break
		}
		return c, nil
	}
	return Claim{}, fmt.Errorf("claim %s: %w", name, ErrNotFound)
}

// expired reports whether a deleted claim's retention has passed (DynamoDB removes it lazily).
func (s *Store) expired(c Claim) bool { return c.TTL > 0 && c.TTL <= s.now().Unix() }

// PutClaim writes c if the stored version is still c.Version, and returns it with the next version.
// ErrConflict if someone else wrote in between; ErrInvalid for a lifecycle move that is not allowed. A
// move to deleted takes the claim out of the live claims (see ListClaims) in the same write.
func (s *Store) PutClaim(ctx context.Context, old, c Claim) (Claim, error) {
	out, err := s.PutClaims(ctx, []Claim{old}, []Claim{c})
	if err != nil {
		return Claim{}, singleClaimError(err, "updating", c.Name)
	}
	return out[0], nil
}

// nextClaimItem checks the update of old to c (same name and version, an allowed lifecycle move, stamped
// when it moves), gives c the next version and a new write id, and encodes it.
func (s *Store) nextClaimItem(old, c Claim) (Claim, map[string]types.AttributeValue, error) {
	if c.Name != old.Name || c.Version != old.Version {
		return Claim{}, nil, fmt.Errorf("claim %s: name and version must not change in an update: %w", old.Name, ErrInvalid)
	}
	if old.Lifecycle != c.Lifecycle {
		if !old.Lifecycle.CanMoveTo(c.Lifecycle) {
			return Claim{}, nil, fmt.Errorf("claim %s: lifecycle %s → %s is not allowed: %w", c.Name, old.Lifecycle, c.Lifecycle, ErrInvalid)
		}
		s.stamp(&c)
	}
	c.Version, c.WriteID = old.Version+1, newWriteID()
	item, err := marshalItem(claimPK(c.Name, c.Lifecycle == Deleted), c.Name, c)
	return c, item, err
}

// UpdateClaim reads the claim, applies mutate and writes it back with optimistic locking, re-reading and
// re-applying up to 5 times on a conflict. mutate may return an error to abandon the update.
func (s *Store) UpdateClaim(ctx context.Context, name string, mutate func(*Claim) error) (Claim, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		old, err := s.GetClaim(ctx, name)
		if err != nil {
			return Claim{}, err
		}
		c := old
		if err := mutate(&c); err != nil {
			return Claim{}, err
		}
		updated, err := s.PutClaim(ctx, old, c)
		if err == nil || !IsConflict(err) {
			return updated, err
		}
		lastErr = err
	}
	return Claim{}, lastErr
}

// stamp records when the claim entered its lifecycle state.
func (s *Store) stamp(c *Claim) {
	now := s.now().UTC()
	switch c.Lifecycle {
	case Launched:
		c.LaunchedAt = &now
	case Registered:
		c.RegisteredAt = &now
	case Initialized:
		c.InitializedAt = &now
	case Draining:
		c.DrainingAt = &now
	case Terminating:
		c.TerminatingAt = &now
	case Deleted:
		c.DeletedAt = &now
		c.TTL = now.Add(DeletedClaimRetention).Unix()
	}
}

// ListClaims returns every live claim (every lifecycle but deleted), by name: one strongly consistent
// query per shard, run concurrently, or, on a store made WithClaimsView, the same answer from a view that
// queries only the shards that changed since its last read. Deleted claims are read with
// ListDeletedClaims.
func (s *Store) ListClaims(ctx context.Context) ([]Claim, error) {
	if s.view != nil {
		return s.view.ListClaims(ctx)
	}
	if _, err := s.migrateLegacyClaims(ctx); err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	claims, err := s.queryShards(ctx, livePartition)
	if err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	return claims, nil
}

// ListDeletedClaims returns the deleted claims kept for explain and audits (until DeletedClaimRetention
// has passed since their deletion), by name. No live path reads them.
func (s *Store) ListDeletedClaims(ctx context.Context) ([]Claim, error) {
	if _, err := s.migrateLegacyClaims(ctx); err != nil {
		return nil, fmt.Errorf("listing deleted claims: %w", err)
	}
	all, err := s.queryShards(ctx, gonePartition)
	if err != nil {
		return nil, fmt.Errorf("listing deleted claims: %w", err)
	}
	claims := all[:0]
	for _, c := range all {
		if !s.expired(c) {
			claims = append(claims, c)
		}
	}
	return claims, nil
}

// ListAllClaims returns the live claims and the deleted ones still kept, by name: what ListClaims
// returned before deleted claims left the live shards (status, explain and audits).
func (s *Store) ListAllClaims(ctx context.Context) ([]Claim, error) {
	live, err := s.ListClaims(ctx)
	if err != nil {
		return nil, err
	}
	gone, err := s.ListDeletedClaims(ctx)
	if err != nil {
		return nil, err
	}
	return sortClaims(append(live, gone...)), nil
}

// queryShards reads the items of every shard's partition (partition(k)) concurrently and returns their
// claims by name.
func (s *Store) queryShards(ctx context.Context, partition func(int) string) ([]Claim, error) {
	shards := make([][]Claim, ClaimShards)
	g, gctx := errgroup.WithContext(ctx)
	for k := range shards {
		g.Go(func() error {
			claims, err := queryAll[Claim](gctx, s.db, s.partition(partition(k), ""))
			shards[k] = claims
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []Claim
	for _, claims := range shards {
		all = append(all, claims...)
	}
	return sortClaims(all), nil
}

// sortClaims orders claims by name (the order one partition used to return them in).
func sortClaims(cs []Claim) []Claim {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

// ClaimsInLifecycle returns the claims in one lifecycle state. It reads a global secondary index, which is
// eventually consistent: a claim that just moved may still show in its old state for a moment.
func (s *Store) ClaimsInLifecycle(ctx context.Context, l Lifecycle) ([]Claim, error) {
	claims, err := queryAll[Claim](ctx, s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexByLifecycle),
		KeyConditionExpression:    aws.String("#l = :l"),
		ExpressionAttributeNames:  map[string]string{"#l": attrLifecycle},
		ExpressionAttributeValues: map[string]types.AttributeValue{":l": str(string(l))},
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s claims: %w", l, err)
	}
	return claims, nil
}

// ClaimByInstance finds the claim of an EC2 instance. ErrNotFound when no claim has that instance id.
func (s *Store) ClaimByInstance(ctx context.Context, instanceID string) (Claim, error) {
	claims, err := queryAll[Claim](ctx, s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexByInstance),
		KeyConditionExpression:    aws.String("#i = :i"),
		ExpressionAttributeNames:  map[string]string{"#i": attrInstanceID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":i": str(instanceID)},
	})
	if err != nil {
		return Claim{}, fmt.Errorf("finding claim of instance %s: %w", instanceID, err)
	}
	switch len(claims) {
	case 0:
		return Claim{}, fmt.Errorf("claim of instance %s: %w", instanceID, ErrNotFound)
	case 1:
		return claims[0], nil
	}
	return Claim{}, errors.New("instance " + instanceID + " is recorded on more than one claim")
}
