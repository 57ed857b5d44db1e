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
	// IPFamily is the cluster's IP family as EKS reports it in kubernetesNetworkConfig.ipFamily: IPv4 or
	// IPv6; empty means the family of ServiceCIDR (IPv4 when that is empty too).
	IPFamily string
	// ServiceCIDR is the cluster's service range in its IP family: serviceIpv4Cidr, or serviceIpv6Cidr on
	// an IPv6 cluster (empty when EKS does not report one).
	ServiceCIDR string
}

// The IP families EKS reports in kubernetesNetworkConfig.ipFamily.
const (
	IPv4 = "ipv4"
	IPv6 = "ipv6"
)

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
	if n := c.KubernetesNetworkConfig; n != nil {
		cluster.IPFamily = string(n.IpFamily)
		cluster.ServiceCIDR = aws.ToString(n.ServiceIpv4Cidr)
		if n.IpFamily == ekstypes.IpFamilyIpv6 {
			cluster.ServiceCIDR = aws.ToString(n.ServiceIpv6Cidr)
		}
	}
	if cluster.Endpoint == "" || cluster.CA == "" {
		return Cluster{}, fmt.Errorf("EKS cluster %s has no endpoint or certificate authority yet: %w", name, ErrClusterNotReady)
	}
	return cluster, nil
}

// Family is the cluster's IP family: IPFamily when set, else the family of ServiceCIDR (IPv4 when it is
// empty or not a range).
func (c Cluster) Family() string {
	if c.IPFamily != "" {
		return c.IPFamily
	}
	if prefix, err := netip.ParsePrefix(c.ServiceCIDR); err == nil && prefix.Addr().Is6() {
		return IPv6
	}
	return IPv4
}

// DNSIP is the cluster DNS service address EKS gives kube-dns: the service range's base address plus 10
// (0xa), in the cluster's IP family — 10.100.0.10 for 10.100.0.0/16, fd12:3456::a for fd12:3456::/108.
func (c Cluster) DNSIP() (string, error) {
	prefix, err := netip.ParsePrefix(c.ServiceCIDR)
	if err != nil {
		return "", fmt.Errorf("service CIDR %q is not a range", c.ServiceCIDR)
	}
	switch family := c.Family(); {
	case family != IPv4 && family != IPv6:
		return "", fmt.Errorf("IP family %q is neither %s nor %s", family, IPv4, IPv6)
	case (family == IPv6) != prefix.Addr().Is6() || prefix.Addr().Is4In6():
		return "", fmt.Errorf("service CIDR %q is not an %s range", c.ServiceCIDR, family)
	}
	if prefix.Bits() > prefix.Addr().BitLen()-4 {
		return "", fmt.Errorf("service CIDR %q is too small to hold the DNS address", c.ServiceCIDR)
	}
	b := prefix.Masked().Addr().AsSlice()
	b[len(b)-1] += 10
	addr, _ := netip.AddrFromSlice(b)
	return addr.String(), nil
}
