package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// TagLaunchTemplateID is the tag EC2 itself puts on an instance launched from a launch template.
const TagLaunchTemplateID = "aws:ec2launchtemplate:id"

// UnusedTemplates deletes the cluster's launch templates that are not kept and have not been made or
// used for a while (launchtemplate.MinUnusedAge); *launchtemplate.Provider satisfies it.
type UnusedTemplates interface {
	DeleteUnused(ctx context.Context, keep []string) ([]string, error)
}

// UnusedProfiles deletes the instance profiles Nodewright made for node classes keep does not name;
// *nodeclass.Profiles satisfies it.
type UnusedProfiles interface {
	DeleteUnused(ctx context.Context, keep map[string]bool) ([]string, error)
}

var (
	_ UnusedTemplates = (*launchtemplate.Provider)(nil)
	_ UnusedProfiles  = (*nodeclass.Profiles)(nil)
)

// houseKeep deletes the launch templates and instance profiles no claim uses any more (after a drift
// roll, an AMI change or a removed EC2NodeClass). It runs only on a whole read of instances, claims and
// configuration (pass calls it after the repairs), and each part holds on anything less.
//
// Launch templates: claims do not record their template, and the templates the current configuration
// launches from depend on each claim's labels, so "in use" is read from two facts instead. A template
// is kept when a listed live instance of the cluster was launched from it (EC2's own
// aws:ec2launchtemplate:id tag), or when it was made or marked used within launchtemplate.MinUnusedAge:
// every provisioner that hands a template to a launch marks it (nodewright.sh/last-used) at least every
// launchtemplate.StampEvery, so the templates the next launch needs and those of a launch in flight
// stay, and a provisioner never relies on a template it has not marked recently. Only templates tagged
// nodewright.sh/cluster=<cluster> and named with the cluster's prefix are ever deleted.
//
// Instance profiles: a profile Nodewright made for a role stays while an EC2NodeClass of the
// configuration maps to it (a class that names a role, or whose stored spec does not decode), or a
// claim that is not deleted, or a live instance, belongs to its class. Nothing is decided when the
// EC2NodeClasses cannot be listed, when there are none (an empty configuration is taken for a broken
// deploy), or when a claim does not say its class.
func (p *passState) houseKeep(ctx context.Context) {
	p.deleteUnusedTemplates(ctx)
	p.deleteUnusedProfiles(ctx)
}

func (p *passState) deleteUnusedTemplates(ctx context.Context) {
	if p.r.deps.Templates == nil {
		return
	}
	var keep []string
	for _, inst := range p.w.instances {
		if id := inst.Tags[TagLaunchTemplateID]; id != "" {
			keep = append(keep, id)
		}
	}
	deleted, err := p.r.deps.Templates.DeleteUnused(ctx, keep)
	p.rep.TemplatesDeleted = append(p.rep.TemplatesDeleted, deleted...)
	if err != nil {
		p.fail("launchtemplates", err)
	}
}

func (p *passState) deleteUnusedProfiles(ctx context.Context) {
	if p.r.deps.Profiles == nil {
		return
	}
	keep, why := p.profileClasses(ctx)
	if why != "" {
		p.hold("unused instance profiles: " + why)
		return
	}
	deleted, err := p.r.deps.Profiles.DeleteUnused(ctx, keep)
	p.rep.ProfilesDeleted = append(p.rep.ProfilesDeleted, deleted...)
	if err != nil {
		p.fail("instanceprofiles", err)
	}
}

// profileClasses are the node classes whose managed instance profiles must stay, or why nothing can be
// decided.
func (p *passState) profileClasses(ctx context.Context) (map[string]bool, string) {
	items, err := p.r.deps.Store.ListConfig(ctx, state.KindEC2NodeClass)
	if err != nil {
		return nil, fmt.Sprintf("the EC2NodeClasses could not be listed, nothing is decided: %v", err)
	}
	if len(items) == 0 {
		return nil, "the configuration holds no EC2NodeClass; taken for a broken deploy, nothing is decided"
	}
	keep := map[string]bool{}
	for _, it := range items {
		nc := &apis.EC2NodeClass{}
		if err := json.Unmarshal([]byte(it.Spec), nc); err != nil || nc.Spec.InstanceProfile == nil {
			keep[it.Name] = true
		}
	}
	for _, c := range p.w.claims {
		if c.Lifecycle == state.Deleted {
			continue
		}
		if c.NodeClass == "" {
			return nil, fmt.Sprintf("claim %s does not say its EC2NodeClass, nothing is decided", c.Name)
		}
		keep[c.NodeClass] = true
	}
	for _, inst := range p.w.instances {
		if class := inst.Tags[instance.TagNodeClass]; class != "" {
			keep[class] = true
		}
	}
	return keep, ""
}
