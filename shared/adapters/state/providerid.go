package state

// NodeProviderID is the provider id the claim's Node carries: the one recorded at launch, or the one made
// from the instance id and zone of a claim that has those without it; empty before the launch answered.
func (c Claim) NodeProviderID() string {
	if c.ProviderID != "" {
		return c.ProviderID
	}
	if c.InstanceID != "" && c.Zone != "" {
		return "aws:///" + c.Zone + "/" + c.InstanceID
	}
	return ""
}
