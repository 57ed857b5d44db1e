package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// DriftOptions shape the drift scenario.
type DriftOptions struct {
	// ScaleUpOptions shape the scale-up that builds the cluster first (default 30 replicas).
	ScaleUpOptions
	// Timeout bounds the wait for every original node to be replaced (default 8 minutes).
	Timeout time.Duration
}

func (o *DriftOptions) defaults() {
	o.ScaleUpOptions.defaults()
	if o.Timeout <= 0 {
		o.Timeout = 8 * time.Minute
	}
}

// driftPoolConfig is the drift scenario's NodePool with the template labels given: the consolidation
// scenario's pool, but consolidateAfter Never, so only drift disrupts its nodes.
func driftPoolConfig(labels string) string { return narrowPoolConfig(labels, "720h", "Never") }

// driftLabel is the label the drift scenario adds to the NodePool's template.
const driftLabel = "nodewright.sh/rollout"

// DriftReport is the drift scenario's outcome.
type DriftReport struct {
	RollReport
	// DriftedNodes: original nodes whose claim got a Drifted condition; DriftReasons: each one's reason.
	DriftedNodes int               `json:"driftedNodes"`
	DriftReasons map[string]string `json:"driftReasons"`
	// ReplacedNodes: original nodes gone by the end; RollSeconds: from the change to the last one gone
	// (-1: not all went).
	ReplacedNodes int     `json:"replacedNodes"`
	RollSeconds   float64 `json:"rollSeconds"`
	// OldImageID and NewImageID: the AMI the nodes ran and the newer one published; NewNodesOnNewImage
	// and NewNodesOnOtherImage count the claims launched after the change by the AMI they got.
	OldImageID           string `json:"oldImageId"`
	NewImageID           string `json:"newImageId"`
	NewNodesOnNewImage   int    `json:"newNodesOnNewImage"`
	NewNodesOnOtherImage int    `json:"newNodesOnOtherImage"`
	// NewNodesDrifted names the claims launched after the change that were judged drifted (a bug:
	// they carry the new template hash and AMI), with the reason and details.
	NewNodesDrifted []string `json:"newNodesDrifted,omitempty"`
}

// Drift runs the drift scenario: inflate scales up on a pool only drift may disrupt, the disruption
// function is deployed, and in one step the NodePool's template gains a label and a newer node AMI is
// published. Every original node drifts and is replaced, within the Drifted budget.
func (s *Sandbox) Drift(ctx context.Context, o DriftOptions) (DriftReport, error) {
	o.defaults()
	rep := DriftReport{RollReport: RollReport{Scenario: "drift", NodePool: ConsolidationNodePool, BudgetAllowed: -1,
		SampleEveryMillis: int(consolidationSampleEvery.Milliseconds())}, RollSeconds: -1, DriftReasons: map[string]string{}}
	start := time.Now()
	w, err := s.setUpRoll(ctx, driftPoolConfig(""), disruption.ReasonDrifted, o.ScaleUpOptions, &rep.RollReport)
	if err != nil {
		return rep, err
	}
	errsBefore := len(s.Errors())
	if rep.OldImageID, err = s.newestSampleImage(ctx); err != nil {
		return rep, err
	}
	s.Timeline.Restart()
	change := time.Now()
	if rep.NewImageID, err = s.publishNewerImage(ctx, rep.OldImageID); err != nil {
		return rep, err
	}
	if err := applyConfig(ctx, s.Store, driftPoolConfig(driftLabel+`: "2"`)); err != nil {
		return rep, fmt.Errorf("changing NodePool %s: %w", rep.NodePool, err)
	}
	s.Timeline.Printf("scenario", "NodePool %s's template gained label %s=2 and AMI %s replaced %s: %d nodes to roll",
		rep.NodePool, driftLabel, rep.NewImageID, rep.OldImageID, rep.NodesBefore)
	lastGone, err := s.followRoll(ctx, w, change.Add(o.Timeout), &rep.RollReport)
	if err != nil {
		return rep, err
	}
	if !lastGone.IsZero() {
		rep.RollSeconds = round3(lastGone.Sub(change).Seconds())
	}
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	s.settle(ctx)
	if err := s.finishRoll(ctx, w, &rep.RollReport, change, errsBefore); err != nil {
		return rep, err
	}
	s.judgeDrift(w, &rep, change)
	return rep, nil
}

// judgeDrift fills the drift-specific figures and the targets.
func (s *Sandbox) judgeDrift(w *rollWatch, rep *DriftReport, change time.Time) {
	for node, claim := range w.originals {
		if reason := w.drifted[claim]; reason != "" {
			rep.DriftedNodes++
			rep.DriftReasons[node] = reason
		}
		if _, ok := w.gone[node]; ok {
			rep.ReplacedNodes++
		}
	}
	for _, c := range w.claims {
		if c.NodePool != rep.NodePool || c.CreatedAt.Before(change) {
			continue
		}
		if c.ImageID == rep.NewImageID {
			rep.NewNodesOnNewImage++
		} else if c.ImageID != "" {
			rep.NewNodesOnOtherImage++
		}
		if reason := w.drifted[c.Name]; reason != "" {
			what := fmt.Sprintf("%s (%s): %s", c.Name, c.NodeName, reason)
			if c.Drifted != nil {
				what += fmt.Sprintf(" %v", c.Drifted.Details)
			}
			rep.NewNodesDrifted = append(rep.NewNodesDrifted, what)
		}
	}
	sort.Strings(rep.NewNodesDrifted)
	onlyDrift := len(rep.Commands) > 0
	for _, c := range rep.Commands {
		onlyDrift = onlyDrift && c.Reason == string(disruption.ReasonDrifted)
	}
	rep.TargetsMet = map[string]bool{
		"driftedNodes=nodesBefore":                rep.NodesBefore > 0 && rep.DriftedNodes == rep.NodesBefore,
		"replacedNodes=nodesBefore":               rep.NodesBefore > 0 && rep.ReplacedNodes == rep.NodesBefore,
		"maxConcurrentDisruptions<=budgetAllowed": rep.BudgetAllowed >= 0 && rep.MaxConcurrentDisruptions <= rep.BudgetAllowed && rep.BudgetExceededSamples == 0,
		"podsLost=0":         rep.PodsLost == 0,
		"noPodUnbound":       rep.PodsUnbound == 0,
		"noLeakedInstances":  rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
		"onlyDriftCommands":  onlyDrift,
		"noRolledBack":       rep.RolledBack == 0,
		"newNodesOnNewImage": rep.NewNodesOnNewImage > 0 && rep.NewNodesOnOtherImage == 0,
		"newNodesNotDrifted": len(rep.NewNodesDrifted) == 0,
		mirrorLagTarget:      mirrorLagMet(rep.MirrorLagSeconds),
	}
	s.Timeline.Printf("scenario", "done: %d of %d original nodes drifted, %d replaced in %.1fs; at most %d disrupting at once (budget %d); mirror lag p50 %.3fs p99 %.3fs over %d changes; pods lost %d; leaked %d; new nodes drifted: %s; targets missed: %s",
		rep.DriftedNodes, rep.NodesBefore, rep.ReplacedNodes, rep.RollSeconds, rep.MaxConcurrentDisruptions, rep.BudgetAllowed,
		rep.MirrorLagSeconds.P50, rep.MirrorLagSeconds.P99, rep.MirrorLagSeconds.N, rep.PodsLost, rep.LeakedInstances, strings.Join(rep.NewNodesDrifted, "; "), strings.Join(missedTargets(rep.TargetsMet), ", "))
}

// newestSampleImage is the AMI the sample EC2NodeClass's selector resolves to: the newest image tagged
// SampleAMITag.
func (s *Sandbox) newestSampleImage(ctx context.Context) (string, error) {
	out, err := s.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + SampleAMITag), Values: []string{"true"}}}})
	if err != nil {
		return "", fmt.Errorf("describing the sandbox AMIs: %w", err)
	}
	newest, at := "", time.Time{}
	for _, im := range out.Images {
		created, err := time.Parse(time.RFC3339, aws.ToString(im.CreationDate))
		if err != nil {
			return "", fmt.Errorf("AMI %s: creation date %q: %w", aws.ToString(im.ImageId), aws.ToString(im.CreationDate), err)
		}
		if newest == "" || created.After(at) {
			newest, at = aws.ToString(im.ImageId), created
		}
	}
	if newest == "" {
		return "", fmt.Errorf("no AMI tagged %s", SampleAMITag)
	}
	return newest, nil
}

// publishNewerImage publishes a node AMI newer than old (moto orders images by a creation date to the
// second) and checks the selector now resolves to it.
func (s *Sandbox) publishNewerImage(ctx context.Context, old string) (string, error) {
	out, err := s.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{old}})
	if err != nil || len(out.Images) == 0 {
		return "", fmt.Errorf("describing AMI %s: %v", old, err)
	}
	if created, err := time.Parse(time.RFC3339, aws.ToString(out.Images[0].CreationDate)); err == nil {
		time.Sleep(time.Until(created.Add(1100 * time.Millisecond)))
	}
	id, err := publishImage(ctx, s.EC2, "sandbox-eks-node-2")
	if err != nil {
		return "", err
	}
	if newest, err := s.newestSampleImage(ctx); err != nil || newest != id {
		return "", fmt.Errorf("published AMI %s, but the selector's newest is %s (%v)", id, newest, err)
	}
	return id, nil
}

// missedTargets lists the targets not met, sorted.
func missedTargets(targets map[string]bool) []string {
	var out []string
	for k, ok := range targets {
		if !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
