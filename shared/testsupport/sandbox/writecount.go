package sandbox

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Write is one mutating request the functions' identity sent to the API server.
type Write struct {
	At     time.Time
	Method string
	// Path is the request path, e.g. /api/v1/nodes/ip-10-0-0-1.ec2.internal/status.
	Path string
}

// Node is the Node the write targets ("" for other resources): the Node itself, its status or any other
// subresource.
func (w Write) Node() string {
	rest, ok := strings.CutPrefix(w.Path, "/api/v1/nodes/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// Pod is the namespace and name of the pod the write targets, with its subresource ("eviction",
// "status", or "" for the pod itself); ok is false for writes to other resources.
func (w Write) Pod() (namespace, name, sub string, ok bool) {
	rest, found := strings.CutPrefix(w.Path, "/api/v1/namespaces/")
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || parts[1] != "pods" {
		return "", "", "", false
	}
	if len(parts) > 3 {
		sub = parts[3]
	}
	return parts[0], parts[2], sub, true
}

// writeLog records the mutating requests of one identity: a client-go transport wrapper on its rest
// config sees every request that identity's clients send, whichever function sends it. Reads (GET,
// LIST, WATCH) are not recorded.
type writeLog struct {
	mu     sync.Mutex
	writes []Write
}

// wrap is a rest.Config WrapTransport function.
func (l *writeLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			l.mu.Lock()
			l.writes = append(l.writes, Write{At: time.Now(), Method: req.Method, Path: req.URL.Path})
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// Writes returns the recorded writes so far.
func (l *writeLog) Writes() []Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Write(nil), l.writes...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
