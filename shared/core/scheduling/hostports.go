package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// HostPort is one <hostIP, port, protocol> a pod binds on its node. An empty or unspecified IP
// (0.0.0.0, ::) conflicts with every IP on the same port and protocol.
type HostPort struct {
	IP       string
	Port     int32
	Protocol corev1.Protocol
}

func (p HostPort) String() string { return fmt.Sprintf("%s:%d/%s", p.IP, p.Port, p.Protocol) }

func (p HostPort) conflicts(o HostPort) bool {
	if p.Port != o.Port || p.Protocol != o.Protocol {
		return false
	}
	return p.IP == o.IP || isWildcardIP(p.IP) || isWildcardIP(o.IP)
}

func isWildcardIP(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }

// PodHostPorts lists the host ports the pod's containers (including init containers) bind.
func PodHostPorts(pod *corev1.Pod) []HostPort {
	var out []HostPort
	collect := func(cs []corev1.Container) {
		for i := range cs {
			for _, p := range cs[i].Ports {
				if p.HostPort == 0 {
					continue
				}
				proto := p.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				out = append(out, HostPort{IP: p.HostIP, Port: p.HostPort, Protocol: proto})
			}
		}
	}
	collect(pod.Spec.InitContainers)
	collect(pod.Spec.Containers)
	return out
}

// HostPortConflict returns the first port in want that conflicts with a port in used, or nil.
func HostPortConflict(used, want []HostPort) *HostPort {
	for _, w := range want {
		for _, u := range used {
			if w.conflicts(u) {
				return &w
			}
		}
	}
	return nil
}
