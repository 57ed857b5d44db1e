package kubetest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ComponentMetrics returns the Prometheus text a running component (kube-scheduler or
// kube-controller-manager) serves at /metrics. The component authenticates the admin token through the
// API server and authorizes it there (system:masters may read metrics).
func (cp *ControlPlane) ComponentMetrics(ctx context.Context, name string) (string, error) {
	port, ok := cp.ports[name]
	if !ok {
		return "", fmt.Errorf("%s is not running in this control plane", name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+cp.Config.BearerToken)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		// The component serves a self-signed certificate of its own, on the loopback address.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, a test control plane
	}}
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading %s's metrics: %w", name, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return "", fmt.Errorf("reading %s's metrics: %w", name, err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("reading %s's metrics: %s", name, res.Status)
	}
	return string(body), nil
}
