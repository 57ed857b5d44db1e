package drift

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// now is when the tests judge; launched() was created two hours before.
var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// launched is a claim as a recorded launch leaves it, in step with pool(), class() and resolution().
func launched() Claim {
	return Claim{Name: "default-abcde", TemplateHash: "p1", TemplateHashVersion: "v1", NodeClassHash: "c1", NodeClassHashVersion: "v1",
		ImageID: "ami-amd64-new", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-2", "sg-1"}, CreatedAt: now.Add(-2 * time.Hour),
		Labels: map[string]string{labelInstanceType: "m5.large", labelArch: "amd64", "karpenter.sh/capacity-type": "on-demand",
			labelZone: "us-east-1a", "karpenter.sh/nodepool": "default", "team": "a"}}
}

func pool() NodePool {
	return NodePool{TemplateHash: "p1", TemplateHashVersion: "v1", Requirements: []Requirement{
		{Key: labelArch, Operator: OpIn, Values: []string{"amd64", "arm64"}},
		{Key: "karpenter.sh/capacity-type", Operator: OpIn, Values: []string{"on-demand", "spot"}}},
		InstanceTypes: offered(map[string][]Offering{
			"m5.large":  {{"us-east-1a", "on-demand"}, {"us-east-1a", "spot"}, {"us-east-1b", "on-demand"}},
			"m6g.large": {{"us-east-1a", "on-demand"}}})}
}

// offered stands in for a NodePool's catalog: the instance types it lists, with their offerings.
func offered(types map[string][]Offering) func(string) ([]Offering, bool) {
	return func(name string) ([]Offering, bool) {
		o, ok := types[name]
		return o, ok
	}
}

func class() NodeClass { return NodeClass{Hash: "c1", HashVersion: "v1"} }

var errDesc = errors.New("DescribeImages: RequestLimitExceeded")

// chooser stands in for the launch path's AMI choice: the AMI per instance type; a type it does not list
// cannot be chosen for (ok false).
func chooser(byType map[string]string) func(Claim) (string, bool) {
	return func(c Claim) (string, bool) {
		id, ok := byType[c.Labels[labelInstanceType]]
		return id, ok
	}
}

func resolution() Resolution {
	return Resolution{AMIs: []AMI{{ID: "ami-nvidia"}, {ID: "ami-amd64-new"}, {ID: "ami-arm64"}},
		ImageFor:  chooser(map[string]string{"m5.large": "ami-amd64-new", "g5.xlarge": "ami-nvidia", "m6g.large": "ami-arm64"}),
		SubnetIDs: []string{"subnet-b", "subnet-a"}, SecurityGroupIDs: []string{"sg-1", "sg-2"}}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		name    string
		claim   func(*Claim)
		pool    func(*NodePool)
		class   func(*NodeClass)
		res     func(*Resolution)
		verdict Verdict
		reasons []Reason
		details map[string]string
	}{
		{name: "nothing changed", verdict: NotDrifted},
		{name: "NodePool template edited", pool: func(p *NodePool) { p.TemplateHash = "p2" }, verdict: Drifted,
			reasons: []Reason{NodePoolDrifted}, details: map[string]string{"oldTemplateHash": "p1", "newTemplateHash": "p2"}},
		{name: "EC2NodeClass edited", class: func(c *NodeClass) { c.Hash = "c2" }, verdict: Drifted,
			reasons: []Reason{NodeClassDrift}, details: map[string]string{"oldNodeClassHash": "c1", "newNodeClassHash": "c2"}},
		{name: "a newer AMI for the node's instance type", res: func(r *Resolution) {
			r.AMIs = []AMI{{ID: "ami-amd64-newer"}, {ID: "ami-arm64"}}
			r.ImageFor = chooser(map[string]string{"m5.large": "ami-amd64-newer", "m6g.large": "ami-arm64"})
		}, claim: func(c *Claim) { c.ImageID = "ami-amd64-new" }, verdict: Drifted, reasons: []Reason{AMIDrift},
			details: map[string]string{"oldImageId": "ami-amd64-new", "newImageId": "ami-amd64-newer"}},
		{name: "only another instance type's AMI changed", res: func(r *Resolution) {
			r.AMIs = []AMI{{ID: "ami-amd64-new"}, {ID: "ami-arm64-newer"}}
			r.ImageFor = chooser(map[string]string{"m5.large": "ami-amd64-new", "m6g.large": "ami-arm64-newer"})
		}, verdict: NotDrifted},
		{name: "the launch's choice is what the node runs, whatever else is resolved", res: func(r *Resolution) {
			r.AMIs = []AMI{{ID: "ami-nvidia-newer"}, {ID: "ami-amd64-new", Deprecated: true}}
		}, verdict: NotDrifted},
		{name: "no AMI fits the node any more", res: func(r *Resolution) {
			r.AMIs = []AMI{{ID: "ami-arm64"}}
			r.ImageFor = chooser(map[string]string{"m5.large": "", "m6g.large": "ami-arm64"})
		}, verdict: Drifted, reasons: []Reason{AMIDrift}, details: map[string]string{"oldImageId": "ami-amd64-new", "newImageId": "<none>"}},
		{name: "subnet no longer selected", res: func(r *Resolution) { r.SubnetIDs = []string{"subnet-c", "subnet-b"} }, verdict: Drifted,
			reasons: []Reason{SubnetDrift}, details: map[string]string{"oldSubnetId": "subnet-a", "selectedSubnetIds": "subnet-b,subnet-c"}},
		{name: "a security group added to the selection", res: func(r *Resolution) { r.SecurityGroupIDs = []string{"sg-1", "sg-2", "sg-3"} },
			verdict: Drifted, reasons: []Reason{SecurityGroupDrift},
			details: map[string]string{"oldSecurityGroupIds": "sg-1,sg-2", "newSecurityGroupIds": "sg-1,sg-2,sg-3"}},
		{name: "a security group removed from the selection", res: func(r *Resolution) { r.SecurityGroupIDs = []string{"sg-2"} },
			verdict: Drifted, reasons: []Reason{SecurityGroupDrift},
			details: map[string]string{"oldSecurityGroupIds": "sg-1,sg-2", "newSecurityGroupIds": "sg-2"}},
		{name: "the node's labels no longer meet a requirement", pool: func(p *NodePool) {
			p.Requirements[1] = Requirement{Key: "karpenter.sh/capacity-type", Operator: OpIn, Values: []string{"spot"}}
		}, verdict: Drifted, reasons: []Reason{RequirementsDrifted},
			details: map[string]string{"requirement": "karpenter.sh/capacity-type In [spot]", "label": "karpenter.sh/capacity-type=on-demand"}},
		{name: "a requirement on a label the node lacks", pool: func(p *NodePool) {
			p.Requirements = append(p.Requirements, Requirement{Key: "karpenter.k8s.aws/instance-family", Operator: OpIn, Values: []string{"m5"}})
		}, verdict: Drifted, reasons: []Reason{RequirementsDrifted},
			details: map[string]string{"requirement": "karpenter.k8s.aws/instance-family In [m5]", "label": "<absent>"}},
		{name: "a label the NodePool does not constrain is not drift", claim: func(c *Claim) { c.Labels["team"] = "b"; c.Labels["extra"] = "x" },
			verdict: NotDrifted},
		{name: "a requirement widened is not drift", pool: func(p *NodePool) { p.Requirements[0].Values = append(p.Requirements[0].Values, "s390x") },
			verdict: NotDrifted},
		{name: "a NotIn on a label the node lacks is met", pool: func(p *NodePool) {
			p.Requirements = append(p.Requirements, Requirement{Key: "karpenter.k8s.aws/instance-family", Operator: OpNotIn, Values: []string{"t3"}})
		}, verdict: NotDrifted},
		{name: "labels that are the Node's stand-ins judge no requirement on a label they lack", claim: func(c *Claim) { c.LabelsFromNode = true },
			pool: func(p *NodePool) {
				p.Requirements = append(p.Requirements, Requirement{Key: "karpenter.k8s.aws/instance-category", Operator: OpIn, Values: []string{"c"}})
			}, verdict: NotDrifted},
		{name: "reservation no longer selected", claim: func(c *Claim) { c.CapacityReservationID = "cr-1" },
			res: func(r *Resolution) { r.CapacityReservationIDs = []string{"cr-2"} }, verdict: Drifted, reasons: []Reason{CapacityReservationDrift},
			details: map[string]string{"capacityReservationId": "cr-1", "selectedCapacityReservationIds": "cr-2"}},
		{name: "reservation still selected", claim: func(c *Claim) { c.CapacityReservationID = "cr-1" },
			res: func(r *Resolution) { r.CapacityReservationIDs = []string{"cr-2", "cr-1"} }, verdict: NotDrifted},
		{name: "no reservation on the claim, none selected", verdict: NotDrifted},
		{name: "the instance type no longer offered", pool: func(p *NodePool) {
			p.InstanceTypes = offered(map[string][]Offering{"m6g.large": {{"us-east-1a", "on-demand"}}})
		}, verdict: Drifted, reasons: []Reason{InstanceTypeNotFound}, details: map[string]string{"instanceType": "m5.large"}},
		{name: "no offering in the node's zone any more", pool: func(p *NodePool) {
			p.InstanceTypes = offered(map[string][]Offering{"m5.large": {{"us-east-1b", "on-demand"}, {"us-east-1b", "spot"}}})
		}, verdict: Drifted, reasons: []Reason{InstanceTypeNotFound},
			details: map[string]string{"instanceType": "m5.large", "zone": "us-east-1a", "capacityType": "on-demand"}},
		{name: "no offering of the node's capacity type any more", claim: func(c *Claim) { c.Labels[labelCapacityType] = "spot" },
			pool: func(p *NodePool) {
				p.InstanceTypes = offered(map[string][]Offering{"m5.large": {{"us-east-1a", "on-demand"}}})
			}, verdict: Drifted, reasons: []Reason{InstanceTypeNotFound},
			details: map[string]string{"instanceType": "m5.large", "zone": "us-east-1a", "capacityType": "spot"}},
		{name: "a reserved node is still offered on-demand", claim: func(c *Claim) { c.Labels[labelCapacityType] = "reserved" },
			pool: func(p *NodePool) {
				p.Requirements[1].Values = append(p.Requirements[1].Values, "reserved")
				p.InstanceTypes = offered(map[string][]Offering{"m5.large": {{"us-east-1a", "on-demand"}}})
			}, verdict: NotDrifted},
		{name: "a reserved node with neither a reserved nor an on-demand offering", claim: func(c *Claim) { c.Labels[labelCapacityType] = "reserved" },
			pool: func(p *NodePool) {
				p.Requirements[1].Values = append(p.Requirements[1].Values, "reserved")
				p.InstanceTypes = offered(map[string][]Offering{"m5.large": {{"us-east-1a", "spot"}, {"us-east-1b", "reserved"}}})
			}, verdict: Drifted, reasons: []Reason{InstanceTypeNotFound},
			details: map[string]string{"instanceType": "m5.large", "zone": "us-east-1a", "capacityType": "reserved"}},
		{name: "a label the node lacks does not narrow the offerings", claim: func(c *Claim) { delete(c.Labels, labelZone) },
			pool: func(p *NodePool) {
				p.InstanceTypes = offered(map[string][]Offering{"m5.large": {{"us-east-1c", "on-demand"}}})
			}, verdict: NotDrifted},
		{name: "several kinds: the first in Karpenter's order is the reason",
			pool: func(p *NodePool) { p.TemplateHash = "p2" }, res: func(r *Resolution) { r.SubnetIDs = []string{"subnet-b"} },
			verdict: Drifted, reasons: []Reason{NodePoolDrifted, SubnetDrift},
			details: map[string]string{"oldTemplateHash": "p1", "newTemplateHash": "p2", "oldSubnetId": "subnet-a", "selectedSubnetIds": "subnet-b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, p, nc, res := launched(), pool(), class(), resolution()
			for _, f := range []func(){func() { call(tc.claim, &c) }, func() { call(tc.pool, &p) }, func() { call(tc.class, &nc) }, func() { call(tc.res, &res) }} {
				f()
			}
			got := Detect(c, p, nc, res, now)
			assert.Equal(t, tc.verdict, got.Verdict)
			assert.Equal(t, tc.reasons, got.Reasons)
			if len(tc.reasons) > 0 {
				assert.Equal(t, tc.reasons[0], got.Reason)
			} else {
				assert.Empty(t, got.Reason)
			}
			assert.Equal(t, tc.details, got.Details)
			assert.Nil(t, got.Restamp)
			assert.Empty(t, got.Undecided)
			assert.Empty(t, got.Unknown)
		})
	}
}

func keys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func call[T any](f func(*T), v *T) {
	if f != nil {
		f(v)
	}
}

// A hash-version bump re-stamps the claim's hash; it is not drift, even though the hash differs.
func TestDetectHashVersionBumpRestamps(t *testing.T) {
	p, nc := pool(), class()
	p.TemplateHash, p.TemplateHashVersion = "p1-v2", "v2"
	nc.Hash, nc.HashVersion = "c1-v2", "v2"
	got := Detect(launched(), p, nc, resolution(), now)
	assert.Equal(t, NotDrifted, got.Verdict)
	assert.Empty(t, got.Reasons)
	assert.Equal(t, &Restamp{TemplateHash: "p1-v2", TemplateHashVersion: "v2", NodeClassHash: "c1-v2", NodeClassHashVersion: "v2"}, got.Restamp)

	t.Run("only the NodePool's version changed", func(t *testing.T) {
		p := pool()
		p.TemplateHash, p.TemplateHashVersion = "p9", "v2"
		got := Detect(launched(), p, class(), resolution(), now)
		assert.Equal(t, NotDrifted, got.Verdict)
		assert.Equal(t, &Restamp{TemplateHash: "p9", TemplateHashVersion: "v2"}, got.Restamp)
	})
	t.Run("a claim written before versions were recorded is re-stamped", func(t *testing.T) {
		c := launched()
		c.TemplateHashVersion, c.NodeClassHashVersion = "", ""
		got := Detect(c, pool(), class(), resolution(), now)
		assert.Equal(t, NotDrifted, got.Verdict)
		assert.Equal(t, &Restamp{TemplateHash: "p1", TemplateHashVersion: "v1", NodeClassHash: "c1", NodeClassHashVersion: "v1"}, got.Restamp)
	})
	t.Run("other kinds are still judged", func(t *testing.T) {
		p := pool()
		p.TemplateHash, p.TemplateHashVersion = "p9", "v2"
		res := resolution()
		res.SubnetIDs = []string{"subnet-z"}
		got := Detect(launched(), p, class(), res, now)
		assert.Equal(t, Drifted, got.Verdict)
		assert.Equal(t, []Reason{SubnetDrift}, got.Reasons)
		assert.NotNil(t, got.Restamp)
	})
}

// A failed or incomplete resolution decides nothing for the kinds that read it, and never drifts them.
func TestDetectUndecidedResolution(t *testing.T) {
	resolved := []Reason{AMIDrift, SecurityGroupDrift, SubnetDrift, CapacityReservationDrift}
	t.Run("the resolution failed", func(t *testing.T) {
		c := launched()
		c.CapacityReservationID = "cr-1"
		res := Resolution{Err: errDesc} // nothing resolved: every list empty
		got := Detect(c, pool(), class(), res, now)
		assert.Equal(t, Undecided, got.Verdict)
		assert.Empty(t, got.Reasons, "an empty answer of a failed call is not a selection")
		for _, kind := range resolved {
			assert.Contains(t, got.Undecided[kind], "RequestLimitExceeded", kind)
		}
	})
	t.Run("the resolution failed but the NodePool drifted", func(t *testing.T) {
		p := pool()
		p.TemplateHash = "p2"
		got := Detect(launched(), p, class(), Resolution{Err: errDesc}, now)
		assert.Equal(t, Drifted, got.Verdict, "what was decided still counts")
		assert.Equal(t, []Reason{NodePoolDrifted}, got.Reasons)
		assert.Len(t, got.Undecided, 3)
	})
	t.Run("AMIs not ready", func(t *testing.T) {
		res := resolution()
		res.AMIs = []AMI{{ID: "ami-other"}}
		res.ImageFor = chooser(map[string]string{"m5.large": "ami-other"})
		res.Incomplete = map[Reason]string{AMIDrift: "AMINotFound: amiSelectorTerms match no AMI"}
		got := Detect(launched(), pool(), class(), res, now)
		assert.Equal(t, Undecided, got.Verdict)
		assert.Equal(t, map[Reason]string{AMIDrift: "AMINotFound: amiSelectorTerms match no AMI"}, got.Undecided)
	})
	t.Run("the launch's AMI choice cannot be made", func(t *testing.T) {
		res := resolution()
		res.ImageFor = chooser(map[string]string{"m6g.large": "ami-arm64"})
		got := Detect(launched(), pool(), class(), res, now)
		assert.Equal(t, Undecided, got.Verdict)
		assert.Empty(t, got.Reasons)
		assert.Len(t, got.Undecided, 1)
		assert.Contains(t, got.Undecided[AMIDrift], "instance type m5.large")
	})
	t.Run("no AMI choice given", func(t *testing.T) {
		res := resolution()
		res.ImageFor = nil
		got := Detect(launched(), pool(), class(), res, now)
		assert.Equal(t, Undecided, got.Verdict)
		assert.Empty(t, got.Reasons)
		assert.Equal(t, []Reason{AMIDrift}, keys(got.Undecided))
	})
	t.Run("the choice is not asked for when nothing is resolved", func(t *testing.T) {
		res := resolution()
		res.AMIs = nil
		res.ImageFor = func(Claim) (string, bool) { t.Fatal("ImageFor called"); return "", false }
		got := Detect(launched(), pool(), class(), res, now)
		assert.Contains(t, got.Undecided, AMIDrift)
		res.AMIs, res.Err = resolution().AMIs, errDesc
		got = Detect(launched(), pool(), class(), res, now)
		assert.Contains(t, got.Undecided[AMIDrift], "RequestLimitExceeded")
	})
	for _, tc := range []struct {
		kind  Reason
		empty func(*Resolution)
	}{
		{AMIDrift, func(r *Resolution) { r.AMIs = nil }},
		{SubnetDrift, func(r *Resolution) { r.SubnetIDs = nil }},
		{SecurityGroupDrift, func(r *Resolution) { r.SecurityGroupIDs = nil }},
	} {
		t.Run("nothing resolved for "+string(tc.kind), func(t *testing.T) {
			res := resolution()
			tc.empty(&res)
			got := Detect(launched(), pool(), class(), res, now)
			assert.Equal(t, Undecided, got.Verdict)
			assert.Empty(t, got.Reasons)
			assert.Contains(t, got.Undecided, tc.kind)
			assert.Len(t, got.Undecided, 1)
		})
	}
}

// What a claim did not record is unknown, not drift, whatever the configuration says now.
func TestDetectOldClaimMissingFields(t *testing.T) {
	old := Claim{Name: "default-0ld01", TemplateHash: "p0", NodeClassHash: "c0",
		Labels: map[string]string{"karpenter.sh/nodepool": "default", "team": "a"}}
	p := pool()
	p.Requirements = append(p.Requirements, Requirement{Key: "karpenter.k8s.aws/instance-family", Operator: OpIn, Values: []string{"m5"}})
	res := resolution()
	res.SubnetIDs, res.SecurityGroupIDs = []string{"subnet-z"}, []string{"sg-9"}
	got := Detect(old, p, class(), res, now)
	assert.Equal(t, NotDrifted, got.Verdict)
	assert.Empty(t, got.Reasons)
	assert.Empty(t, got.Undecided)
	assert.ElementsMatch(t, []Reason{RequirementsDrifted, InstanceTypeNotFound, AMIDrift, SecurityGroupDrift, SubnetDrift}, got.Unknown)
	assert.Equal(t, &Restamp{TemplateHash: "p1", TemplateHashVersion: "v1", NodeClassHash: "c1", NodeClassHashVersion: "v1"}, got.Restamp,
		"hashes of no recorded version are re-stamped, as Karpenter does")

	t.Run("no current hash to compare with", func(t *testing.T) {
		got := Detect(launched(), NodePool{Requirements: pool().Requirements, InstanceTypes: pool().InstanceTypes}, NodeClass{}, resolution(), now)
		assert.Equal(t, NotDrifted, got.Verdict)
		assert.ElementsMatch(t, []Reason{NodePoolDrifted, NodeClassDrift}, got.Unknown)
		assert.Nil(t, got.Restamp)
	})
}

func TestReasonsAreKarpentersInOrder(t *testing.T) {
	want := []string{"NodePoolDrifted", "RequirementsDrifted", "InstanceTypeNotFound", "NodeClassDrift", "AMIDrift", "SecurityGroupDrift", "SubnetDrift", "CapacityReservationDrift"}
	got := make([]string, len(Reasons))
	for i, r := range Reasons {
		got[i] = string(r)
	}
	assert.Equal(t, want, got)
}

// InstanceTypeNotFound is judged only for a claim older than an hour, as Karpenter judges it: a younger
// one on a type gone from the catalog is not drifted yet (nor unknown, nor undecided).
func TestDetectInstanceTypeNotFoundWaitsAnHour(t *testing.T) {
	gone := pool()
	gone.InstanceTypes = offered(map[string][]Offering{"m6g.large": {{"us-east-1a", "on-demand"}}})
	for _, tc := range []struct {
		name    string
		age     time.Duration
		drifted bool
	}{
		{"created 59 minutes ago", 59 * time.Minute, false},
		{"created exactly an hour ago", time.Hour, false},
		{"created an hour and a second ago", time.Hour + time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := launched()
			c.CreatedAt = now.Add(-tc.age)
			got := Detect(c, gone, class(), resolution(), now)
			assert.Empty(t, got.Unknown)
			assert.Empty(t, got.Undecided)
			if tc.drifted {
				assert.Equal(t, []Reason{InstanceTypeNotFound}, got.Reasons)
			} else {
				assert.Equal(t, NotDrifted, got.Verdict)
			}
		})
	}
	t.Run("no time given: not judged", func(t *testing.T) {
		got := Detect(launched(), gone, class(), resolution(), time.Time{})
		assert.Equal(t, NotDrifted, got.Verdict)
	})
}

// What the claim did not record is unknown; what the NodePool offers not being known is undecided.
func TestDetectInstanceTypeNotFoundUnknownAndUndecided(t *testing.T) {
	t.Run("no creation time recorded", func(t *testing.T) {
		c := launched()
		c.CreatedAt = time.Time{}
		got := Detect(c, pool(), class(), resolution(), now)
		assert.Equal(t, NotDrifted, got.Verdict)
		assert.Equal(t, []Reason{InstanceTypeNotFound}, got.Unknown)
	})
	t.Run("no instance type recorded", func(t *testing.T) {
		c := launched()
		delete(c.Labels, labelInstanceType)
		got := Detect(c, pool(), class(), resolution(), now)
		assert.Contains(t, got.Unknown, InstanceTypeNotFound)
		assert.NotContains(t, got.Reasons, InstanceTypeNotFound)
	})
	t.Run("the NodePool's instance types not known", func(t *testing.T) {
		p := pool()
		p.InstanceTypes = nil
		got := Detect(launched(), p, class(), resolution(), now)
		assert.Equal(t, Undecided, got.Verdict)
		assert.Equal(t, map[Reason]string{InstanceTypeNotFound: "the instance types the NodePool offers are not known"}, got.Undecided)
	})
}
