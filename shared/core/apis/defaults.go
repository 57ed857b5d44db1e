package apis

// Defaults Karpenter's CRDs apply.
const (
	DefaultExpireAfter         NillableDuration    = "720h"
	DefaultConsolidateAfter    NillableDuration    = "0s"
	DefaultConsolidationPolicy ConsolidationPolicy = ConsolidationPolicyWhenEmptyOrUnderutilized
	DefaultBudgetNodes                             = "10%"

	DefaultHTTPEndpoint            = "enabled"
	DefaultHTTPProtocolIPv6        = "disabled"
	DefaultHTTPPutResponseHopLimit = int64(1)
	DefaultHTTPTokens              = "required"
)

// SetDefaults fills what the API server would default when the NodePool is applied: expireAfter 720h,
// consolidationPolicy WhenEmptyOrUnderutilized, consolidateAfter 0s, and budgets [{nodes: "10%"}] when
// budgets is absent (an explicit empty list stays empty: no budget limits). terminationGracePeriod has
// no default. Setting defaults twice changes nothing.
func (np *NodePool) SetDefaults() {
	if np.Spec.Template.Spec.ExpireAfter == "" {
		np.Spec.Template.Spec.ExpireAfter = DefaultExpireAfter
	}
	d := &np.Spec.Disruption
	if d.ConsolidationPolicy == "" {
		d.ConsolidationPolicy = DefaultConsolidationPolicy
	}
	if d.ConsolidateAfter == "" {
		d.ConsolidateAfter = DefaultConsolidateAfter
	}
	if d.Budgets == nil {
		d.Budgets = []Budget{{Nodes: DefaultBudgetNodes}}
	}
	for i := range d.Budgets {
		if d.Budgets[i].Nodes == "" {
			d.Budgets[i].Nodes = DefaultBudgetNodes
		}
	}
}

// SetDefaults fills what the API server would default when the EC2NodeClass is applied: metadataOptions
// {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens: required},
// field by field when metadataOptions is given in part. amiFamily is not defaulted; AMIFamily() resolves
// it from the alias, as Karpenter does.
func (nc *EC2NodeClass) SetDefaults() {
	if nc.Spec.MetadataOptions == nil {
		nc.Spec.MetadataOptions = &MetadataOptions{}
	}
	m := nc.Spec.MetadataOptions
	if m.HTTPEndpoint == nil {
		m.HTTPEndpoint = ptr(DefaultHTTPEndpoint)
	}
	if m.HTTPProtocolIPv6 == nil {
		m.HTTPProtocolIPv6 = ptr(DefaultHTTPProtocolIPv6)
	}
	if m.HTTPPutResponseHopLimit == nil {
		m.HTTPPutResponseHopLimit = ptr(DefaultHTTPPutResponseHopLimit)
	}
	if m.HTTPTokens == nil {
		m.HTTPTokens = ptr(DefaultHTTPTokens)
	}
}

// SetDefaults fills expireAfter 720h, as for NodePool templates.
func (c *NodeClaim) SetDefaults() {
	if c.Spec.ExpireAfter == "" {
		c.Spec.ExpireAfter = DefaultExpireAfter
	}
}

func ptr[T any](v T) *T { return &v }
