package launchtemplate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/instance"
)

// EC2API is the part of EC2 the provider uses; *ec2.Client satisfies it.
type EC2API interface {
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, optFns ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error)
	ec2.DescribeLaunchTemplatesAPIClient
}

var _ EC2API = (*ec2.Client)(nil)

// NamePrefix starts the name of every launch template Nodewright makes.
const NamePrefix = "nodewright"

// MinUnusedAge is how old an unused launch template must be before DeleteUnused removes it, so that a
// template another invocation has just made for a launch in flight is not deleted under it.
const MinUnusedAge = 10 * time.Minute

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
	known map[string]bool // names known to exist
}

// New returns a provider for cluster; now is the clock DeleteUnused ages templates by.
func New(api EC2API, cluster string, now func() time.Time) *Provider {
	return &Provider{ec2: api, cluster: cluster, now: now, known: map[string]bool{}}
}

// Ensure returns the name of the launch template for t, creating it when it does not exist yet. A
// template another caller created first is fine: the name says its data are the same. Names are
// remembered, so a second Ensure for the same inputs makes no call. The error wraps the EC2 error when
// creation fails, or says which input is missing or invalid.
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
	p.mu.Lock()
	known := p.known[name]
	p.mu.Unlock()
	if known {
		return name, nil
	}
	tags := Tags(p.cluster, t.NodeClass, t.Options.Labels[apis.NodePoolLabelKey])
	_, err = p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data,
		VersionDescription: aws.String("node class " + t.NodeClass.Name),
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tagList(tags)}},
	})
	if err != nil && apiCode(err) != errCodeAlreadyExists {
		return "", fmt.Errorf("creating launch template %s: %w", name, err)
	}
	p.mu.Lock()
	p.known[name] = true
	p.mu.Unlock()
	return name, nil
}

// Invalidate forgets that a template exists, so the next Ensure creates it again; call it when a launch
// reports the template missing.
func (p *Provider) Invalidate(name string) {
	p.mu.Lock()
	delete(p.known, name)
	p.mu.Unlock()
}

// DeleteUnused deletes the cluster's launch templates (tagged nodewright.sh/cluster=<cluster> and named
// with its prefix) that are not in keep and are older than MinUnusedAge, and returns their names. Templates of
// other clusters or not made by Nodewright are never touched; one already gone is not an error.
func (p *Provider) DeleteUnused(ctx context.Context, keep []string) ([]string, error) {
	keepSet := make(map[string]bool, len(keep))
	for _, name := range keep {
		keepSet[name] = true
	}
	pages := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + instance.TagCluster), Values: []string{p.cluster}}},
	})
	var unused []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing launch templates of cluster %s: %w", p.cluster, err)
		}
		for _, lt := range page.LaunchTemplates {
			name := aws.ToString(lt.LaunchTemplateName)
			if !strings.HasPrefix(name, namePrefix(p.cluster)) || keepSet[name] {
				continue
			}
			if lt.CreateTime != nil && p.now().Sub(*lt.CreateTime) < MinUnusedAge {
				continue
			}
			unused = append(unused, name)
		}
	}
	var deleted []string
	for _, name := range unused {
		_, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
		if err != nil && apiCode(err) != errCodeNotFound && apiCode(err) != errCodeIDNotFound {
			return deleted, fmt.Errorf("deleting launch template %s: %w", name, err)
		}
		p.Invalidate(name)
		deleted = append(deleted, name)
	}
	return deleted, nil
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
