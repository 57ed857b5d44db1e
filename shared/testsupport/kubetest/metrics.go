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
// API server and authorizes it there (system:masters may read metrics), so on a busy machine an answer
// can wait for a busy API server: a read that fails or times out is tried again, metricsAttempts times
// in all, each within metricsTimeout, while ctx lasts.
func (cp *ControlPlane) ComponentMetrics(ctx context.Context, name string) (string, error) {
	port, ok := cp.ports[name]
	if !ok {
		return "", fmt.Errorf("%s is not running in this control plane", name)
	}
	client := &http.Client{Timeout: metricsTimeout, Transport: &http.Transport{
		// The component serves a self-signed certificate of its own, on the loopback address.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, a test control plane
	}}
	defer client.CloseIdleConnections()
	var err error
	for attempt := 1; attempt <= metricsAttempts; attempt++ {
		var text string
		if text, err = cp.readMetrics(ctx, client, port); err == nil {
			return text, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("reading %s's metrics (%d attempts): %w", name, metricsAttempts, err)
}

const (
	// metricsAttempts is how many times ComponentMetrics reads a component's metrics before it gives up,
	// each read within metricsTimeout.
	metricsAttempts = 3
	metricsTimeout  = 20 * time.Second
)

// readMetrics is one read of the metrics the component on port serves.
func (cp *ControlPlane) readMetrics(ctx context.Context, client *http.Client, port int) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+cp.Config.BearerToken)
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", res.Status)
	}
	return string(body), nil
}
