package faults

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// reset is the error a read on a connection the peer reset returns.
func reset() error {
	return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

// discard closes a request body the layer will not send, as a RoundTripper must.
func discard(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// wait sleeps for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// respond is a response to req with status, headers and body, as if read off the wire.
func respond(req *http.Request, status int, header http.Header, body []byte) *http.Response {
	header.Set("Content-Length", itoa(len(body)))
	return &http.Response{Status: itoa(status) + " " + http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1, Header: header, Body: io.NopCloser(&byteReader{b: body}), ContentLength: int64(len(body)),
		Request: req}
}

type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
