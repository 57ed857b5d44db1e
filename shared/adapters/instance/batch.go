package instance

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

// TagBatch marks the instances of one batched CreateFleet call: its value is the call's ClientToken (the
// batch id, or the batch id and "-<attempt>" for a fallback attempt). A batch's instances are tagged
// alike, so the claim tag is added to each instance afterwards (see LaunchBatch).
const TagBatch = "nodewright.sh/launch-batch"

// MaxBatchSize bounds the claims of one batched launch. A fleet of a hundred is well inside an instant
// fleet's capacity, the DescribeInstances of its answer fits one page, and one batch's failure or retry
// touches no more than a hundred claims; a 4,000-node burst still needs only 40 calls.
const MaxBatchSize = 100

// InBatch reports whether an instance's TagBatch value belongs to batch: the batch's first call or one of
// its fallback attempts.
func InBatch(tag, batch string) bool {
	return batch != "" && (tag == batch || strings.HasPrefix(tag, batch+"-"))
}

// BatchRequest is one CreateFleet for several identical claims.
type BatchRequest struct {
	// Request is what every claim launches; its Claim is ignored and its ClientToken defaults to Batch.
	Request
	// Batch is the id recorded on each claim before the call.
	Batch string
	// Claims are the claims to launch, one instance each, in the order instances are handed out.
	Claims []string
}

// Assignment is one claim and the instance it got.
type Assignment struct {
	Claim    string
	Instance Instance
}

// BatchResult is what a batched launch did.
type BatchResult struct {
	// Assigned pairs claims with instances, in the order of BatchRequest.Claims.
	Assigned []Assignment
	// Unassigned are the claims that got no instance, in order.
	Unassigned []string
	// Partial is the fleet's error for the capacity it could not launch (an *InsufficientCapacityError,
	// *OfferingsError or *LaunchError) when it launched some.
	Partial error
	// Adopted says the instances were found by the batch tag: by a retry before any fleet was asked for,
	// or after a call whose outcome was unknown (see createFleet).
	Adopted bool
	// TagErrors are the claim tags that could not be added; the assignment stands (the claim records its
	// instance id, and reconciliation pairs a batch's instances with its claims).
	TagErrors []error
}

// LaunchBatch launches one instance for each of req.Claims with a single CreateFleet whose
// TotalTargetCapacity is their number, or adopts those an earlier call with the same token started (found
// by the batch tag: real EC2 answers a repeated token with the first fleet, but the answer may have been
// lost), or that a call whose outcome was unknown started. Instances are handed to claims deterministically
// (see assign) and each is then tagged with its claim. When EC2 launched nothing the error is classified as
// Launch's; when it launched fewer than asked, the rest of the claims are Unassigned and Partial says why
// (an error Answered is false for when whether they started is unknown).
func (l *Launcher) LaunchBatch(ctx context.Context, req BatchRequest) (BatchResult, error) {
	req.Claim = req.Batch
	if req.ClientToken == "" {
		req.ClientToken = req.Batch
	}
	if err := validateBatch(req); err != nil {
		return BatchResult{}, err
	}
	byToken := func(ctx context.Context) ([]Instance, error) {
		return l.list(ctx, []ec2types.Filter{
			{Name: aws.String("tag:" + TagBatch), Values: []string{req.ClientToken}},
			{Name: aws.String("tag:" + TagCluster), Values: []string{l.cluster}},
			{Name: aws.String("instance-state-name"), Values: liveStates},
		})
	}
	var found []Instance
	if !req.Fresh {
		var err error
		if found, err = byToken(ctx); err != nil {
			return BatchResult{}, &notAskedError{fmt.Errorf("looking up the instances of batch %s: %w", req.ClientToken, err)}
		}
	}
	res := BatchResult{Adopted: len(found) > 0}
	if len(found) == 0 {
		var err error
		if found, res.Adopted, res.Partial, err = l.batchFleet(ctx, req, byToken); err != nil {
			return BatchResult{}, err
		}
	}
	res.Assigned, res.Unassigned = assign(req.Claims, found)
	for i, a := range res.Assigned {
		if a.Instance.CapacityReservationID != "" {
			res.Assigned[i].Instance = req.reserved(a.Instance)
		}
	}
	res.TagErrors = l.tagClaims(ctx, res.Assigned)
	return res, nil
}

// batchFleet asks for the batch's fleet and returns the instances it started, and partial (the error for
// the capacity it could not launch) when it started fewer than asked. When the call's outcome was unknown
// and the look-up by the batch's token found instances (see createFleet), those are the batch's (adopted):
// fewer than asked may mean the rest are not listed yet, so partial then leaves the other claims to
// reconciliation as an unknown outcome; they are never launched again by this batch.
func (l *Launcher) batchFleet(ctx context.Context, req BatchRequest, byToken func(context.Context) ([]Instance, error)) (
	found []Instance, adopted bool, partial error, err error) {
	out, adoptable, err := l.createFleet(ctx, l.batchFleetInput(req), "creating fleet for batch "+req.ClientToken, byToken)
	if len(adoptable) > 0 {
		if len(adoptable) < len(req.Claims) {
			partial = fmt.Errorf("batch %s: %d of %d instances found after an unknown outcome: %w",
				req.ClientToken, len(adoptable), len(req.Claims), err)
		}
		return adoptable, true, partial, nil
	}
	if err != nil {
		return nil, false, nil, err
	}
	if found = l.fleetInstances(ctx, req.Request, out); len(found) == 0 {
		return nil, false, nil, fleetErrors(req.Request, out.Errors)
	}
	switch {
	case len(out.Errors) > 0:
		partial = fleetErrors(req.Request, out.Errors)
	case len(found) < len(req.Claims):
		// Fewer instances and no error: nothing names an offering, so the whole request counts as short.
		partial = fmt.Errorf("creating fleet for batch %s: %d of %d instances: %w", req.ClientToken, len(found),
			len(req.Claims), &InsufficientCapacityError{Codes: []string{"UnfulfilledCapacity"}})
	}
	return found, false, partial, nil
}

// MaxConcurrentTags bounds the CreateTags calls one batch makes at once. Each instance takes its own call
// (its claim tag's value is its own); a hundred one after the other take seconds, while eight at a time
// stay far inside EC2's request-rate bucket for CreateTags, and the adaptive retryer slows down if EC2
// throttles anyway.
const MaxConcurrentTags = 8

// tagClaims tags each assigned instance with its claim (those already tagged are left alone), up to
// MaxConcurrentTags at once, and records the tag on the assignment; it returns the tags that failed.
func (l *Launcher) tagClaims(ctx context.Context, assigned []Assignment) []error {
	errs := make([]error, len(assigned))
	slots := make(chan struct{}, MaxConcurrentTags)
	var wg sync.WaitGroup
	for i, a := range assigned {
		if a.Instance.Tags[TagNodeClaim] == a.Claim {
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			errs[i] = l.tagClaimGuarded(ctx, a.Instance.ID, a.Claim)
		}()
	}
	wg.Wait()
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if assigned[i].Instance.Tags == nil {
			assigned[i].Instance.Tags = map[string]string{}
		}
		assigned[i].Instance.Tags[TagNodeClaim] = assigned[i].Claim
	}
	return failed
}

// tagClaimGuarded is tagClaim on a worker goroutine: a panic there is that tag's error (the assignment
// is kept, as for any failed tag), not the end of the process.
func (l *Launcher) tagClaimGuarded(ctx context.Context, id, claim string) (err error) {
	defer crash.Capture(&err)
	return l.tagClaim(ctx, id, claim)
}

func validateBatch(req BatchRequest) error {
	if err := validate(req.Request); err != nil {
		return err
	}
	if len(req.Claims) == 0 || len(req.Claims) > MaxBatchSize {
		return &LaunchError{Kind: KindInvalidRequest, Code: "InvalidBatch", Message: fmt.Sprintf("a batch launches 1 to %d claims, not %d", MaxBatchSize, len(req.Claims))}
	}
	seen := map[string]bool{}
	for _, c := range req.Claims {
		if c == "" || seen[c] {
			return &LaunchError{Kind: KindInvalidRequest, Code: "InvalidBatch", Message: fmt.Sprintf("batch claims must be named and distinct (%q)", c)}
		}
		seen[c] = true
	}
	return nil
}

// batchFleetInput is the single-claim fleet input for N instances, tagged with the batch token instead of
// a claim.
func (l *Launcher) batchFleetInput(req BatchRequest) *ec2.CreateFleetInput {
	in := l.fleetInput(req.Request)
	in.TargetCapacitySpecification.TotalTargetCapacity = aws.Int32(int32(len(req.Claims)))
	tags := req.tags()
	delete(tags, TagNodeClaim)
	tags[TagBatch] = req.ClientToken
	list := tagList(tags)
	for i := range in.TagSpecifications {
		in.TagSpecifications[i].Tags = list
	}
	return in
}

// fleetInstances describes every instance the fleet returned (all ids of every entry); an instance EC2
// does not describe yet is reported as the fleet saw it.
func (l *Launcher) fleetInstances(ctx context.Context, req Request, out *ec2.CreateFleetOutput) []Instance {
	var ids []string
	seen := map[string]Instance{}
	for _, fi := range out.Instances {
		for _, id := range fi.InstanceIds {
			if _, dup := seen[id]; dup {
				continue
			}
			got := Instance{ID: id, InstanceType: string(fi.InstanceType), CapacityType: req.CapacityType}
			if o := fi.LaunchTemplateAndOverrides; o != nil && o.Overrides != nil {
				got.Zone = aws.ToString(o.Overrides.AvailabilityZone)
			}
			seen[id] = got
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	described, err := l.byID(ctx, ids)
	if err == nil {
		for _, d := range described {
			seen[d.ID] = d
		}
	}
	found := make([]Instance, 0, len(ids))
	for _, id := range ids {
		found = append(found, seen[id])
	}
	return found
}

// assign hands instances to claims: an instance already tagged with one of the claims goes to it (a
// retry after tagging), the others go in instance-id order to the remaining claims in their order. So a
// retry that finds the same instances pairs them as the first call did. Instances beyond the claims are
// left unassigned (they carry the batch tag; reconciliation rebuilds their claims).
func assign(claims []string, instances []Instance) ([]Assignment, []string) {
	sorted := append([]Instance(nil), instances...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	byClaim := map[string]Instance{}
	var free []Instance
	wanted := map[string]bool{}
	for _, c := range claims {
		wanted[c] = true
	}
	for _, inst := range sorted {
		c := inst.Tags[TagNodeClaim]
		if _, taken := byClaim[c]; c != "" && wanted[c] && !taken {
			byClaim[c] = inst
			continue
		}
		if c == "" {
			free = append(free, inst)
		}
	}
	var assigned []Assignment
	var unassigned []string
	for _, c := range claims {
		if inst, ok := byClaim[c]; ok {
			assigned = append(assigned, Assignment{Claim: c, Instance: inst})
			continue
		}
		if len(free) > 0 {
			assigned = append(assigned, Assignment{Claim: c, Instance: free[0]})
			free = free[1:]
			continue
		}
		unassigned = append(unassigned, c)
	}
	return assigned, unassigned
}

// tagClaim adds the claim tag to an instance the batch launched.
func (l *Launcher) tagClaim(ctx context.Context, id, claim string) error {
	_, err := l.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id},
		Tags: []ec2types.Tag{{Key: aws.String(TagNodeClaim), Value: aws.String(claim)}}})
	if err != nil {
		return fromAPIError(fmt.Sprintf("tagging instance %s with claim %s", id, claim), err)
	}
	return nil
}
