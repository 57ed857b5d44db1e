package lifecycle

import (
	"context"
	"sort"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// InstanceNamer sets an instance's Name tag; *instance.Launcher satisfies it.
type InstanceNamer interface {
	NameInstance(ctx context.Context, id, node string) error
}

var _ InstanceNamer = (*instance.Launcher)(nil)

// MaxNamesPerSweep bounds the Name tags one sweep sets. Each is a CreateTags call of its own (every name
// differs), and CreateTags draws on the same EC2 request budget as the provisioner's launches; Karpenter
// tags at most one instance a second. A hundred a sweep (about one a minute) keeps pace with any burst of
// joining Nodes within minutes, and names the instances of an existing cluster after an upgrade within
// an hour at 5,000 nodes.
const MaxNamesPerSweep = 100

// toName is an instance to give the Name tag, and the name.
type toName struct{ id, node string }

// nameInstances gives the listed instance of each claim in service whose Node has registered (the claim
// records its NodeName) the Name tag Karpenter gives it: the Node's name. On EKS that is the name the
// kubelet registered with, known only once the Node has joined, so it cannot be tagged at launch. An
// instance that has a Name tag already keeps it (an EC2NodeClass may set one; Karpenter leaves it too),
// so a sweep names each instance once; a failed tag stays unnamed and the next sweep tries again. The
// claims are as this pass read them: a Node registered during the pass is named by the next sweep. At
// most MaxNamesPerSweep instances are named, in instance id order, up to RunnerConfig.Workers at once,
// and none is started within the deadline margin.
func (p *passState) nameInstances(ctx context.Context) {
	if p.r.deps.Namer == nil {
		return
	}
	nodeOf := map[string]string{}
	for _, c := range p.w.claims {
		if c.InstanceID != "" && c.NodeName != "" && p.lifecycle[c.Name].InService() {
			nodeOf[c.InstanceID] = c.NodeName
		}
	}
	var todo []toName
	for _, inst := range p.w.instances {
		if _, named := inst.Tags[instance.TagName]; named {
			continue
		}
		if node, ok := nodeOf[inst.ID]; ok {
			todo = append(todo, toName{id: inst.ID, node: node})
		}
	}
	sort.Slice(todo, func(i, j int) bool { return todo[i].id < todo[j].id })
	if len(todo) > MaxNamesPerSweep {
		todo = todo[:MaxNamesPerSweep]
	}
	pace(ctx, p, todo, func(ctx context.Context, n toName) {
		// A panic here is this tag's error, not the pass's.
		if err := crash.Call(func() error { return p.r.deps.Namer.NameInstance(ctx, n.id, n.node) }); err != nil {
			p.fail("instance/"+n.id, err)
			return
		}
		p.locked(func() { p.rep.InstancesNamed++ })
	})
}
