package provisioning

import (
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
)

// NodeJoin is what a launched node is told about cluster c to join it: the API server and its CA, the
// cluster's IP family, the service range in that family and the cluster DNS address in it (the range's
// base address + 10, as EKS gives kube-dns). It fails when c has no service range of its family.
func NodeJoin(c kube.Cluster) (launchtemplate.Cluster, error) {
	dns, err := c.DNSIP()
	if err != nil {
		return launchtemplate.Cluster{}, err
	}
	return launchtemplate.Cluster{Name: c.Name, Endpoint: c.Endpoint, CABundle: c.CA, IPFamily: c.Family(),
		ServiceCIDR: c.ServiceCIDR, DNSIP: dns}, nil
}
