package launchtemplate

import (
	"fmt"
	"strconv"
)

// bottlerocketUserData is the node class's TOML with Nodewright's [settings.kubernetes] merged in.
//
// Which side wins follows Karpenter: every setting Nodewright writes replaces the user's (cluster
// name, API server, certificate, DNS, max pods, reserved resources, eviction and image GC settings when
// spec.kubelet sets them, and node-taints, which always come from the NodePool); node-labels are merged,
// Nodewright's labels winning on the same key. Every other user setting, inside settings.kubernetes or
// elsewhere, is kept. Bottlerocket ignores podsPerCore, so it is not written. With instanceStorePolicy
// RAID0 a bootstrap command puts the instance-store disks into an array for containerd, the kubelet and
// pod logs.
func bottlerocketUserData(o Options) (string, error) {
	if err := o.validate(false); err != nil {
		return "", err
	}
	k, err := o.kubelet()
	if err != nil {
		return "", err
	}
	root, err := parseTOML(o.UserData)
	if err != nil {
		return "", fmt.Errorf("parsing the node class's Bottlerocket user data: %w", err)
	}
	settings, err := subTable(root, "settings")
	if err != nil {
		return "", err
	}
	kube, err := subTable(settings, "kubernetes")
	if err != nil {
		return "", err
	}
	kube["cluster-name"] = o.Cluster.Name
	kube["api-server"] = o.Cluster.Endpoint
	if o.Cluster.CABundle != "" {
		kube["cluster-certificate"] = o.Cluster.CABundle
	}
	if len(k.ClusterDNS) > 0 {
		kube["cluster-dns-ip"] = k.ClusterDNS[0]
	}
	if k.MaxPods != nil {
		kube["max-pods"] = int64(*k.MaxPods)
	}
	labels, err := subTable(kube, "node-labels")
	if err != nil {
		return "", err
	}
	for _, l := range o.nodeLabels() {
		labels[l.key] = l.value
	}
	if len(labels) == 0 {
		delete(kube, "node-labels")
	}
	taints := tomlTable{}
	for _, t := range o.registerTaints() {
		list, _ := taints[t.Key].([]any)
		taints[t.Key] = append(list, t.Value+":"+string(t.Effect))
	}
	kube["node-taints"] = taints
	for name, values := range map[string]map[string]string{
		"kube-reserved":              k.KubeReserved,
		"system-reserved":            k.SystemReserved,
		"eviction-hard":              k.EvictionHard,
		"eviction-soft":              k.EvictionSoft,
		"eviction-soft-grace-period": k.EvictionSoftGracePeriod,
	} {
		if values == nil {
			continue
		}
		t := tomlTable{}
		for key, v := range values {
			t[key] = v
		}
		kube[name] = t
	}
	if k.EvictionMaxPodGracePeriod != nil {
		kube["eviction-max-pod-grace-period"] = int64(*k.EvictionMaxPodGracePeriod)
	}
	// Bottlerocket's model takes the image GC thresholds as strings.
	if k.ImageGCHighThresholdPercent != nil {
		kube["image-gc-high-threshold-percent"] = strconv.Itoa(int(*k.ImageGCHighThresholdPercent))
	}
	if k.ImageGCLowThresholdPercent != nil {
		kube["image-gc-low-threshold-percent"] = strconv.Itoa(int(*k.ImageGCLowThresholdPercent))
	}
	if k.CPUCFSQuota != nil {
		kube["cpu-cfs-quota-enforced"] = *k.CPUCFSQuota
	}
	if o.raid0() {
		commands, err := subTable(settings, "bootstrap-commands")
		if err != nil {
			return "", err
		}
		commands["000-mount-instance-storage"] = tomlTable{
			"commands": []any{
				[]any{"apiclient", "ephemeral-storage", "init"},
				[]any{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"},
			},
			"essential": true,
			"mode":      "always",
		}
	}
	return writeTOML(root), nil
}

// subTable returns t[name] as a table, creating it when absent.
func subTable(t tomlTable, name string) (tomlTable, error) {
	switch v := t[name].(type) {
	case nil:
		sub := tomlTable{}
		t[name] = sub
		return sub, nil
	case tomlTable:
		return v, nil
	default:
		return nil, fmt.Errorf("user data sets %s to a %T, want a table", name, v)
	}
}
