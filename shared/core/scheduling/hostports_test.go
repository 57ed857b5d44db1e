package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestHostPortConflict(t *testing.T) {
	tcp := corev1.ProtocolTCP
	tests := []struct {
		name      string
		used      []HostPort
		want      HostPort
		conflicts bool
	}{
		{name: "free port", used: []HostPort{{Port: 80, Protocol: tcp}}, want: HostPort{Port: 81, Protocol: tcp}},
		{name: "same port wildcard", used: []HostPort{{Port: 80, Protocol: tcp}}, want: HostPort{Port: 80, Protocol: tcp}, conflicts: true},
		{name: "other protocol", used: []HostPort{{Port: 53, Protocol: corev1.ProtocolUDP}}, want: HostPort{Port: 53, Protocol: tcp}},
		{name: "different specific IPs", used: []HostPort{{IP: "10.0.0.1", Port: 80, Protocol: tcp}}, want: HostPort{IP: "10.0.0.2", Port: 80, Protocol: tcp}},
		{name: "0.0.0.0 conflicts with a specific IP", used: []HostPort{{IP: "10.0.0.1", Port: 80, Protocol: tcp}}, want: HostPort{IP: "0.0.0.0", Port: 80, Protocol: tcp}, conflicts: true},
		{name: ":: conflicts with a specific IP", used: []HostPort{{IP: "::", Port: 80, Protocol: tcp}}, want: HostPort{IP: "10.0.0.2", Port: 80, Protocol: tcp}, conflicts: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HostPortConflict(tt.used, []HostPort{tt.want})
			assert.Equal(t, tt.conflicts, got != nil)
		})
	}
}

func TestPodHostPorts(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Ports: []corev1.ContainerPort{{HostPort: 9000, Protocol: corev1.ProtocolUDP}}}},
		Containers:     []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 80, HostPort: 80, HostIP: "10.0.0.1"}}}},
	}}
	assert.Equal(t, []HostPort{{Port: 9000, Protocol: corev1.ProtocolUDP}, {IP: "10.0.0.1", Port: 80, Protocol: corev1.ProtocolTCP}}, PodHostPorts(pod))
	assert.Equal(t, "10.0.0.1:80/TCP", PodHostPorts(pod)[1].String())
}
