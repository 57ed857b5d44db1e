package pricing

import (
	"fmt"
	"strings"
)

// EnvIsolatedVPC is set to "true" on the functions that price instances when they run in a VPC without
// internet access (the CDK context value isolatedVPC, as Karpenter's ISOLATED_VPC). The Pricing API has
// no VPC endpoint in most regions, so an isolated provider never calls it and prices with the shipped
// table.
const EnvIsolatedVPC = "NODEWRIGHT_ISOLATED_VPC"

// IsolatedNote is what a decision priced by an isolated provider says after the table's source.
const IsolatedNote = "isolated VPC: the Pricing API is never called"

// NewProviderFromEnv is NewProvider for region, isolated (Isolate) when getenv(EnvIsolatedVPC) is
// "true". Unset, empty and "false" are not isolated; any other value is refused, naming the variable.
func NewProviderFromEnv(region string, getenv func(string) string) (*Provider, error) {
	isolated := false
	switch v := getenv(EnvIsolatedVPC); v {
	case "", "false":
	case "true":
		isolated = true
	default:
		return nil, fmt.Errorf("%s=%q: want true or false", EnvIsolatedVPC, v)
	}
	p, err := NewProvider(region)
	if err != nil {
		return nil, err
	}
	if isolated {
		p.Isolate()
	}
	return p, nil
}

// Isolate marks the provider as running without internet access: from then on it keeps the shipped
// on-demand table (an OnDemandRefresher never calls the Pricing API for it, and no stored table replaces
// it), and OnDemandSourceInfo says so. Spot prices still come from EC2, which has an endpoint.
func (p *Provider) Isolate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isolated = true
}

// Isolated is whether Isolate was called.
func (p *Provider) Isolated() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.isolated
}

// DecisionNote is what the decisions priced by p record about their prices (state.WithPriceNote): the
// source of the shipped table and IsolatedNote when p is isolated, and the currency when it is not USD
// (decisions word amounts with a $ whatever the currency); "" when there is nothing to say.
func (p *Provider) DecisionNote() string {
	var notes []string
	if p.Isolated() {
		notes = append(notes, p.OnDemandSourceInfo())
	}
	if c := p.Currency(); c != "USD" {
		notes = append(notes, "prices are "+c+" per hour: the amounts written with $ are "+c)
	}
	return strings.Join(notes, "; ")
}
