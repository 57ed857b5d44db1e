package lifecycle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// recTemplates records what DeleteUnused was asked to keep and answers with deleted and err.
type recTemplates struct {
	calls   int
	keep    []string
	deleted []string
	err     error
}

func (r *recTemplates) DeleteUnused(_ context.Context, keep []string) ([]string, error) {
	r.calls++
	r.keep = keep
	return r.deleted, r.err
}

// recProfiles records the classes DeleteUnused was asked to keep and answers with deleted and err.
type recProfiles struct {
	calls   int
	keep    map[string]bool
	deleted []string
	err     error
}

func (r *recProfiles) DeleteUnused(_ context.Context, keep map[string]bool) ([]string, error) {
	r.calls++
	r.keep = keep
	return r.deleted, r.err
}

// nodeClassItems are the stored EC2NodeClasses: "default" names a role, "named" an instance profile of
// its own, and "broken" does not decode.
func nodeClassItems() []state.ConfigItem {
	return []state.ConfigItem{
		{Kind: state.KindEC2NodeClass, Name: "default", Spec: `{"metadata":{"name":"default"},"spec":{"role":"NodeRole"}}`},
		{Kind: state.KindEC2NodeClass, Name: "named", Spec: `{"metadata":{"name":"named"},"spec":{"instanceProfile":"Mine"}}`},
		{Kind: state.KindEC2NodeClass, Name: "broken", Spec: "{"},
	}
}

// housekeepingRig has the claims, instances and configuration of the housekeeping tests: a live claim
// of class gpu with its instance, launched from lt-live; a deleted claim of class old; and an instance of
// class spot no claim stands for.
func housekeepingRig(t *testing.T) (*rig, *recTemplates, *recProfiles) {
	live := claimOn("live", "default", state.Initialized, "i-0live", "")
	live.NodeClass = "gpu"
	gone := claimOn("gone", "default", state.Deleted, "i-0gone", "")
	gone.NodeClass = "old"
	r := newRig(t, live, gone)
	r.store.config = append(r.store.config, nodeClassItems()...)
	r.instances = listedInstances{list: []instance.Instance{
		{ID: "i-0live", Zone: "us-east-1a", State: "running", LaunchTime: testNow, Tags: map[string]string{
			instance.TagCluster: "test", instance.TagNodeClaim: "live", instance.TagNodeClass: "gpu", TagLaunchTemplateID: "lt-live"}},
		{ID: "i-0stray", Zone: "us-east-1a", State: "running", LaunchTime: testNow, Tags: map[string]string{
			instance.TagCluster: "test", instance.TagNodeClass: "spot", TagLaunchTemplateID: "lt-stray"}},
	}}
	templates := &recTemplates{deleted: []string{"nodewright/test/0123456789abcdef"}}
	profiles := &recProfiles{deleted: []string{"nodewright_test_0123"}}
	r.templates, r.profiles = templates, profiles
	return r, templates, profiles
}

func TestHousekeepingKeepsWhatClaimsAndTheConfigurationUse(t *testing.T) {
	r, templates, profiles := housekeepingRig(t)
	rep := r.run(t)

	assert.ElementsMatch(t, []string{"lt-live", "lt-stray"}, templates.keep, "templates live instances were launched from stay")
	assert.Equal(t, map[string]bool{"default": true, "broken": true, "gpu": true, "spot": true}, profiles.keep,
		"a class naming a role or not decoding, a live claim's class and a live instance's class keep their profiles; "+
			"a class naming its own profile and a deleted claim's class do not")
	assert.Equal(t, []string{"nodewright/test/0123456789abcdef"}, rep.TemplatesDeleted)
	assert.Equal(t, []string{"nodewright_test_0123"}, rep.ProfilesDeleted)
	assert.Contains(t, rep.String(), "templatesDeleted=1 profilesDeleted=1")
	assert.Empty(t, rep.Held)
}

func TestHousekeepingDecidesNothingOnPartialData(t *testing.T) {
	cases := map[string]struct {
		change        func(r *rig)
		templateCalls int
		held          string
	}{
		"the instance list failed": {
			change: func(r *rig) { r.instances.err = errors.New("throttled") },
		},
		"the EC2NodeClasses could not be listed": {
			change:        func(r *rig) { r.store.poolsErr = errors.New("throttled") },
			templateCalls: 1, held: "the EC2NodeClasses could not be listed",
		},
		"no EC2NodeClass is stored": {
			change:        func(r *rig) { r.store.config = configItems() },
			templateCalls: 1, held: "holds no EC2NodeClass",
		},
		"a claim does not say its class": {
			change: func(r *rig) {
				c := claimOn("legacy", "default", state.Launched, "i-0legacy", "")
				c.NodeClass = ""
				r.store.claims = append(r.store.claims, c)
			},
			templateCalls: 1, held: "claim legacy does not say its EC2NodeClass",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, templates, profiles := housekeepingRig(t)
			tc.change(r)
			rep := r.run(t)
			assert.Equal(t, tc.templateCalls, templates.calls)
			assert.Zero(t, profiles.calls, "no instance profile is deleted")
			assert.Empty(t, rep.ProfilesDeleted)
			if tc.held != "" {
				assert.True(t, slices.ContainsFunc(rep.Held, func(h string) bool {
					return strings.HasPrefix(h, "unused instance profiles: ") && strings.Contains(h, tc.held)
				}), rep.Held)
			}
		})
	}
}

func TestHousekeepingFailuresAreReportedAndDeletionsKept(t *testing.T) {
	r, templates, profiles := housekeepingRig(t)
	templates.err = errors.New("deleting launch template x: UnauthorizedOperation")
	profiles.err = errors.New("deleting instance profile y: AccessDenied")
	rep := r.run(t)
	assert.Equal(t, []string{"nodewright/test/0123456789abcdef"}, rep.TemplatesDeleted, "what was deleted before the error is reported")
	assert.Contains(t, rep.Errors, "launchtemplates: deleting launch template x: UnauthorizedOperation")
	assert.Contains(t, rep.Errors, "instanceprofiles: deleting instance profile y: AccessDenied")
}
