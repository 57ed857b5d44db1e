package launchtemplate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// EC2API is the part of EC2 the provider uses; *ec2.Client satisfies it.
type EC2API interface {
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	CreateTags(ctx context.Context, in *ec2.CreateTagsInput, optFns ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
	DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, optFns ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error)
	ec2.DescribeLaunchTemplatesAPIClient
	ec2.DescribeTagsAPIClient
}

var _ EC2API = (*ec2.Client)(nil)

// NamePrefix starts the name of every launch template Nodewright makes.
const NamePrefix = "nodewright"

// MinUnusedAge is how long a launch template must have been neither created nor used (its TagLastUsed)
// before DeleteUnused removes it, so that a template a launch in flight has just made or picked is not
// deleted under it. It is several StampEvery long: a provider trusts its memory of a template for at most
// StampEvery, so no provider still relies on a template DeleteUnused removes.
const MinUnusedAge = 10 * time.Minute

// StampEvery is how often Ensure marks a template it hands out as used (TagLastUsed): a template is
// remembered for at most this long, then marked again, or made again if it is gone.
const StampEvery = 2 * time.Minute

// TagLastUsed is the tag Ensure sets to the time (RFC 3339, UTC) it last handed out the template.
const TagLastUsed = "nodewright.sh/last-used"

// EC2 error codes the provider acts on.
const (
	errCodeAlreadyExists = "InvalidLaunchTemplateName.AlreadyExistsException"
	errCodeNotFound      = "InvalidLaunchTemplateName.NotFoundException"
	errCodeIDNotFound    = "InvalidLaunchTemplateId.NotFound"
)

// Name is the launch template name for data in cluster: "nodewright/<cluster>/<hash>", the hash being
// the first 16 hex digits of the SHA-256 of the data's JSON. Equal data give equal names (an SDK upgrade
// that adds fields to the data type renames every template once; DeleteUnused then removes the old ones).
func Name(cluster string, data *ec2types.RequestLaunchTemplateData) (string, error) {
	encoded, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("hashing launch template data: %w", err)
	}
	sum := sha256.Sum256(encoded)
	return namePrefix(cluster) + hex.EncodeToString(sum[:])[:16], nil
}

func namePrefix(cluster string) string { return NamePrefix + "/" + cluster + "/" }

// Provider creates and deletes one cluster's launch templates. It is safe for concurrent use.
type Provider struct {
	ec2     EC2API
	cluster string
	now     func() time.Time

	mu    sync.Mutex
	known map[string]knownTemplate // by name: templates known to exist
}

// knownTemplate is a template Ensure made or found: its id and when Ensure last marked it used.
type knownTemplate struct {
	id      string
	stamped time.Time
}

// New returns a provider for cluster; now is the clock templates are marked used and aged by.
func New(api EC2API, cluster string, now func() time.Time) *Provider {
	return &Provider{ec2: api, cluster: cluster, now: now, known: map[string]knownTemplate{}}
}

// Ensure returns the name of the launch template for t, creating it when it does not exist yet. A
// template another caller created first is fine: the name says its data are the same. Ensure marks the
// template used (TagLastUsed) and remembers it; for StampEvery after that, Ensure for the same inputs
// makes no call. The error wraps the EC2 error when creation or marking fails, or says which input is
// missing or invalid.
func (p *Provider) Ensure(ctx context.Context, t Template) (string, error) {
	if t.Options.Cluster.Name != p.cluster {
		return "", fmt.Errorf("launch template for cluster %q from a provider for cluster %q", t.Options.Cluster.Name, p.cluster)
	}
	data, err := Data(t)
	if err != nil {
		return "", err
	}
	name, err := Name(p.cluster, data)
	if err != nil {
		return "", err
	}
	now := p.now()
	p.mu.Lock()
	k, known := p.known[name]
	p.mu.Unlock()
	if known && now.Sub(k.stamped) < StampEvery {
		return name, nil
	}
	if known && k.id != "" {
		err := p.stamp(ctx, k.id, now)
		if err == nil {
			p.remember(name, k.id, now)
			return name, nil
		}
		if !isNotFound(err) {
			return "", fmt.Errorf("marking launch template %s used: %w", name, err)
		}
		p.Invalidate(name) // deleted since: make it again
	}
	tags := Tags(p.cluster, t.NodeClass, t.Options.Labels[apis.NodePoolLabelKey])
	tags[TagLastUsed] = stampValue(now)
	out, err := p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data,
		VersionDescription: aws.String("node class " + t.NodeClass.Name),
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tagList(tags)}},
	})
	var id string
	switch {
	case err == nil:
		if out.LaunchTemplate != nil {
			id = aws.ToString(out.LaunchTemplate.LaunchTemplateId)
		}
	case apiCode(err) == errCodeAlreadyExists:
		if id, err = p.stampExisting(ctx, name, now); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("creating launch template %s: %w", name, err)
	}
	p.remember(name, id, now)
	return name, nil
}

// stampExisting marks a template another caller made as used, and returns its id.
func (p *Provider) stampExisting(ctx context.Context, name string, now time.Time) (string, error) {
	out, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err != nil {
		return "", fmt.Errorf("reading launch template %s: %w", name, err)
	}
	if len(out.LaunchTemplates) != 1 {
		return "", fmt.Errorf("reading launch template %s: %d templates of that name", name, len(out.LaunchTemplates))
	}
	id := aws.ToString(out.LaunchTemplates[0].LaunchTemplateId)
	if err := p.stamp(ctx, id, now); err != nil {
		return "", fmt.Errorf("marking launch template %s used: %w", name, err)
	}
	return id, nil
}

// stamp sets the template's TagLastUsed to now.
func (p *Provider) stamp(ctx context.Context, id string, now time.Time) error {
	_, err := p.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id},
		Tags: []ec2types.Tag{{Key: aws.String(TagLastUsed), Value: aws.String(stampValue(now))}}})
	return err
}

func stampValue(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (p *Provider) remember(name, id string, stamped time.Time) {
	p.mu.Lock()
	p.known[name] = knownTemplate{id: id, stamped: stamped}
	p.mu.Unlock()
}

// Invalidate forgets that a template exists, so the next Ensure creates it again; call it when a launch
// reports the template missing.
func (p *Provider) Invalidate(name string) {
	p.mu.Lock()
	delete(p.known, name)
	p.mu.Unlock()
}

func isNotFound(err error) bool {
	code := apiCode(err)
	return code == errCodeNotFound || code == errCodeIDNotFound
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
