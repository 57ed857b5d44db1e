package apis

import "encoding/json"

// DeepCopy returns an independent copy of the NodePool.
func (np *NodePool) DeepCopy() *NodePool {
	out := &NodePool{}
	roundTrip(np, out)
	out.Origin = np.Origin
	return out
}

// DeepCopy returns an independent copy of the EC2NodeClass.
func (nc *EC2NodeClass) DeepCopy() *EC2NodeClass {
	out := &EC2NodeClass{}
	roundTrip(nc, out)
	out.Origin = nc.Origin
	return out
}

// DeepCopy returns an independent copy of the NodeClaim.
func (c *NodeClaim) DeepCopy() *NodeClaim {
	out := &NodeClaim{}
	roundTrip(c, out)
	return out
}

// roundTrip copies in to out through JSON. The types are plain data that always encode, so an error is a
// programming mistake.
func roundTrip(in, out any) {
	data, err := json.Marshal(in)
	if err != nil {
		panic("apis: encoding a copy: " + err.Error())
	}
	if err := json.Unmarshal(data, out); err != nil {
		panic("apis: decoding a copy: " + err.Error())
	}
}
