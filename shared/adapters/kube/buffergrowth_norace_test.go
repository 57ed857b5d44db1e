//go:build !race

package kube

// bufferAllocs is how many times bytes.Buffer.Grow allocates the buffer it grows to: once (see the race
// build's for why a race build differs).
const bufferAllocs = 1
