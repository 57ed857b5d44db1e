package launchtemplate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// al2UserData is a MIME document: the node class's user data parts, then a shell part that calls the EKS
// AMI's /etc/eks/bootstrap.sh with the cluster details and the kubelet's labels, taints and settings as
// --kubelet-extra-args. bootstrap.sh must not be given flags with an equals sign, so its own options are
// written as separate words. On an IPv6 cluster it is also given --ip-family ipv6 and the IPv6 service
// range (--service-ipv6-cidr), so the kubelet registers the instance's IPv6 address as its node IP.
func al2UserData(o Options) (string, error) {
	if err := o.validate(false); err != nil {
		return "", err
	}
	args, err := o.kubeletArgs()
	if err != nil {
		return "", err
	}
	k, err := o.kubelet()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash -xe\n")
	b.WriteString("exec > >(tee /var/log/user-data.log | logger -t user-data -s 2>/dev/console) 2>&1\n")
	fmt.Fprintf(&b, "/etc/eks/bootstrap.sh '%s' --apiserver-endpoint '%s'", o.Cluster.Name, o.Cluster.Endpoint)
	if o.Cluster.CABundle != "" {
		fmt.Fprintf(&b, " --b64-cluster-ca '%s'", o.Cluster.CABundle)
	}
	if o.Cluster.IPv6() {
		b.WriteString(" \\\n  --ip-family ipv6")
		if o.Cluster.ServiceCIDR != "" {
			fmt.Fprintf(&b, " \\\n  --service-ipv6-cidr '%s'", o.Cluster.ServiceCIDR)
		}
	}
	if len(k.ClusterDNS) > 0 {
		fmt.Fprintf(&b, " \\\n  --dns-cluster-ip '%s'", k.ClusterDNS[0])
	}
	if k.MaxPods != nil {
		b.WriteString(" \\\n  --use-max-pods false")
	}
	if o.raid0() {
		b.WriteString(" \\\n  --local-disks raid0")
	}
	fmt.Fprintf(&b, " \\\n  --kubelet-extra-args '%s'\n", strings.Join(args, " "))
	return MergeUserData(o.UserData, guessScript, NewPart(ContentTypeShell, b.String()))
}

// kubeletArgs are the kubelet flags for families configured through flags: labels, taints, then the
// kubelet settings in a fixed order, map entries sorted by key.
func (o Options) kubeletArgs() ([]string, error) {
	k, err := o.kubelet()
	if err != nil {
		return nil, err
	}
	var args []string
	if flag := o.labelsFlag(); flag != "" {
		args = append(args, flag)
	}
	args = append(args, o.taintsFlag())
	if k.MaxPods != nil {
		args = append(args, "--max-pods="+strconv.Itoa(int(*k.MaxPods)))
	}
	if k.PodsPerCore != nil {
		args = append(args, "--pods-per-core="+strconv.Itoa(int(*k.PodsPerCore)))
	}
	for _, m := range []struct {
		flag, sep string
		values    map[string]string
	}{
		{"--system-reserved", "=", k.SystemReserved},
		{"--kube-reserved", "=", k.KubeReserved},
		{"--eviction-hard", "<", k.EvictionHard},
		{"--eviction-soft", "<", k.EvictionSoft},
		{"--eviction-soft-grace-period", "=", k.EvictionSoftGracePeriod},
	} {
		if len(m.values) == 0 {
			continue
		}
		keys := make([]string, 0, len(m.values))
		for key := range m.values {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		pairs := make([]string, len(keys))
		for i, key := range keys {
			pairs[i] = key + m.sep + m.values[key]
		}
		args = append(args, m.flag+"="+strings.Join(pairs, ","))
	}
	if k.EvictionMaxPodGracePeriod != nil {
		args = append(args, "--eviction-max-pod-grace-period="+strconv.Itoa(int(*k.EvictionMaxPodGracePeriod)))
	}
	if k.ImageGCHighThresholdPercent != nil {
		args = append(args, "--image-gc-high-threshold="+strconv.Itoa(int(*k.ImageGCHighThresholdPercent)))
	}
	if k.ImageGCLowThresholdPercent != nil {
		args = append(args, "--image-gc-low-threshold="+strconv.Itoa(int(*k.ImageGCLowThresholdPercent)))
	}
	if k.CPUCFSQuota != nil {
		args = append(args, "--cpu-cfs-quota="+strconv.FormatBool(*k.CPUCFSQuota))
	}
	for _, arg := range args {
		if strings.ContainsAny(arg, "'\"\\ \t\r\n$`;&|") {
			return nil, fmt.Errorf("kubelet argument %q contains quotes, spaces or shell characters", arg)
		}
	}
	return args, nil
}
