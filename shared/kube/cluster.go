package kube

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

// EKSAPI reads a cluster's connection details; *eks.Client satisfies it.
type EKSAPI interface {
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, optFns ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
}

var _ EKSAPI = (*eks.Client)(nil)

// Cluster is what a function needs to reach a cluster's API server.
type Cluster struct {
	Name     string
	Endpoint string // https URL
	// CA is the cluster CA as EKS returns it (base64 of PEM); RESTConfig accepts it as is.
	CA string
	// Version is the Kubernetes minor, e.g. "1.34".
	Version string
	// ServiceCIDR is the cluster's IPv4 service range (empty when EKS does not report one).
	ServiceCIDR string
}

// ErrClusterNotReady is returned for a cluster that exists but is not ACTIVE (creating, updating…).
var ErrClusterNotReady = errors.New("cluster is not active")

// DescribeCluster reads the endpoint, CA and version of an EKS cluster. Functions use it when their
// configuration does not carry the endpoint and CA; the answer changes rarely and is worth caching for
// the life of an execution environment.
func DescribeCluster(ctx context.Context, api EKSAPI, name string) (Cluster, error) {
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		var nf *ekstypes.ResourceNotFoundException
		if errors.As(err, &nf) {
			return Cluster{}, fmt.Errorf("describing EKS cluster %s: %w", name, ErrNotFound)
		}
		return Cluster{}, fmt.Errorf("describing EKS cluster %s: %w", name, err)
	}
	c := out.Cluster
	if c == nil {
		return Cluster{}, fmt.Errorf("describing EKS cluster %s: empty answer", name)
	}
	if c.Status != "" && c.Status != ekstypes.ClusterStatusActive && c.Status != ekstypes.ClusterStatusUpdating {
		return Cluster{}, fmt.Errorf("EKS cluster %s is %s: %w", name, c.Status, ErrClusterNotReady)
	}
	cluster := Cluster{Name: name, Endpoint: aws.ToString(c.Endpoint), Version: aws.ToString(c.Version)}
	if c.CertificateAuthority != nil {
		cluster.CA = aws.ToString(c.CertificateAuthority.Data)
	}
	if c.KubernetesNetworkConfig != nil {
		cluster.ServiceCIDR = aws.ToString(c.KubernetesNetworkConfig.ServiceIpv4Cidr)
	}
	if cluster.Endpoint == "" || cluster.CA == "" {
		return Cluster{}, fmt.Errorf("EKS cluster %s has no endpoint or certificate authority yet: %w", name, ErrClusterNotReady)
	}
	return cluster, nil
}

// DNSIP is the cluster DNS service address EKS uses: the tenth address of the service range.
func (c Cluster) DNSIP() (string, error) {
	prefix, err := netip.ParsePrefix(c.ServiceCIDR)
	if err != nil || !prefix.Addr().Is4() {
		return "", fmt.Errorf("service CIDR %q is not an IPv4 range", c.ServiceCIDR)
	}
	a := prefix.Masked().Addr().As4()
	a[3] += 10
	return netip.AddrFrom4(a).String(), nil
}
