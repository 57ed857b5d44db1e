package kube

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/client-go/kubernetes"
)

// The environment every function reads to reach its cluster (the CDK app sets the name; the rest may be
// set to spare a DescribeCluster call at start).
const (
	EnvClusterName     = "NODEWRIGHT_CLUSTER_NAME"
	EnvClusterEndpoint = "NODEWRIGHT_CLUSTER_ENDPOINT"
	EnvClusterCA       = "NODEWRIGHT_CLUSTER_CA"
	EnvServiceCIDR     = "NODEWRIGHT_SERVICE_CIDR"
	// EnvIPFamily is "ipv4" or "ipv6" (EKS kubernetesNetworkConfig.ipFamily); unset, the family of the
	// service CIDR.
	EnvIPFamily          = "NODEWRIGHT_IP_FAMILY"
	EnvKubernetesVersion = "NODEWRIGHT_KUBERNETES_VERSION"
)

// Need says which cluster details a function needs beyond the endpoint and CA.
type Need struct {
	// Nodes: the service CIDR (in the cluster's IP family) and the Kubernetes version, which launching
	// nodes requires.
	Nodes bool
}

// ClusterFromEnv reads the cluster from getenv and asks EKS (api) for whatever is needed and unset;
// values set in the environment win.
func ClusterFromEnv(ctx context.Context, getenv func(string) string, api EKSAPI, need Need) (Cluster, error) {
	c := Cluster{Name: getenv(EnvClusterName), Endpoint: getenv(EnvClusterEndpoint), CA: getenv(EnvClusterCA),
		IPFamily: getenv(EnvIPFamily), ServiceCIDR: getenv(EnvServiceCIDR), Version: getenv(EnvKubernetesVersion)}
	if c.Name == "" {
		return Cluster{}, fmt.Errorf("%s is required", EnvClusterName)
	}
	if c.Endpoint != "" && c.CA != "" && (!need.Nodes || (c.ServiceCIDR != "" && c.Version != "")) {
		return c, nil
	}
	described, err := DescribeCluster(ctx, api, c.Name)
	if err != nil {
		return Cluster{}, err
	}
	return c.Fill(described), nil
}

// Fill takes from described what c leaves unset.
func (c Cluster) Fill(described Cluster) Cluster {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&c.Endpoint, described.Endpoint}, {&c.CA, described.CA}, {&c.IPFamily, described.IPFamily},
		{&c.ServiceCIDR, described.ServiceCIDR}, {&c.Version, described.Version},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
	return c
}

// Connect returns a clientset for the cluster that authenticates with EKS tokens signed by cfg's
// credentials (the function's role, mapped by its access entry).
func Connect(cfg aws.Config, c Cluster) (kubernetes.Interface, error) {
	rest, err := RESTConfig(c.Endpoint, c.CA, NewTokensFromConfig(cfg, c.Name))
	if err != nil {
		return nil, err
	}
	return NewClientset(rest)
}
