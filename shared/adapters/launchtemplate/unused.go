package launchtemplate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// DeleteUnused deletes the cluster's launch templates that nothing uses any more, and returns their
// names. A template is deleted only when all of these hold:
//   - it is Nodewright's for this cluster: tagged nodewright.sh/cluster=<cluster> and named with the
//     cluster's prefix "nodewright/<cluster>/" (another cluster's, Karpenter's, a node group's or a
//     look-alike without the tag are never touched);
//   - keep names neither its name nor its id (the caller keeps the templates live instances were
//     launched from);
//   - it was neither created nor marked used (TagLastUsed) within MinUnusedAge: every Ensure that hands
//     the template to a launch marks it at least every StampEvery, so a template the current
//     configuration still launches from, or a launch in flight has picked, is never old enough.
//
// A template already gone is not an error. The error is the first failed list or delete; the names
// deleted before it are returned with it.
func (p *Provider) DeleteUnused(ctx context.Context, keep []string) ([]string, error) {
	keepSet := make(map[string]bool, len(keep))
	for _, k := range keep {
		keepSet[k] = true
	}
	pages := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + instance.TagCluster), Values: []string{p.cluster}}},
	})
	marks, err := p.lastUsedMarks(ctx)
	if err != nil {
		return nil, err
	}
	now := p.now()
	var unused []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing launch templates of cluster %s: %w", p.cluster, err)
		}
		for _, lt := range page.LaunchTemplates {
			name := aws.ToString(lt.LaunchTemplateName)
			if !strings.HasPrefix(name, namePrefix(p.cluster)) || !ownedBy(lt.Tags, p.cluster) ||
				keepSet[name] || keepSet[aws.ToString(lt.LaunchTemplateId)] {
				continue
			}
			if last, known := lastUsed(lt, marks); !known || now.Sub(last) < MinUnusedAge {
				continue
			}
			unused = append(unused, name)
		}
	}
	var deleted []string
	for _, name := range unused {
		_, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
		if err != nil && !isNotFound(err) {
			return deleted, fmt.Errorf("deleting launch template %s: %w", name, err)
		}
		p.Invalidate(name)
		deleted = append(deleted, name)
	}
	return deleted, nil
}

// ownedBy reports whether the tags say the template is Nodewright's for cluster (the list filter says
// so too; this does not rely on it).
func ownedBy(tags []ec2types.Tag, cluster string) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == instance.TagCluster {
			return aws.ToString(t.Value) == cluster
		}
	}
	return false
}

// lastUsedMarks reads every launch template's TagLastUsed, by template id. DescribeTags reads the tags
// as they are now (a template's own tag list may be the one it was created with).
func (p *Provider) lastUsedMarks(ctx context.Context) (map[string]time.Time, error) {
	pages := ec2.NewDescribeTagsPaginator(p.ec2, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("resource-type"), Values: []string{string(ec2types.ResourceTypeLaunchTemplate)}},
		{Name: aws.String("key"), Values: []string{TagLastUsed}},
	}})
	marks := map[string]time.Time{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading when launch templates were last used: %w", err)
		}
		for _, t := range page.Tags {
			if at, err := time.Parse(time.RFC3339, aws.ToString(t.Value)); err == nil {
				marks[aws.ToString(t.ResourceId)] = at
			}
		}
	}
	return marks, nil
}

// lastUsed is the latest of the template's creation, its TagLastUsed and its mark in marks; known is
// false when EC2 did not say when it was created (such a template is never deleted).
func lastUsed(lt ec2types.LaunchTemplate, marks map[string]time.Time) (last time.Time, known bool) {
	if lt.CreateTime == nil {
		return time.Time{}, false
	}
	last = *lt.CreateTime
	for _, t := range lt.Tags {
		if aws.ToString(t.Key) != TagLastUsed {
			continue
		}
		if at, err := time.Parse(time.RFC3339, aws.ToString(t.Value)); err == nil && at.After(last) {
			last = at
		}
	}
	if at, ok := marks[aws.ToString(lt.LaunchTemplateId)]; ok && at.After(last) {
		last = at
	}
	return last, true
}
