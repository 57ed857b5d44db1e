//go:build race

package kube

// bufferAllocs is how many times bytes.Buffer.Grow allocates the buffer it grows to. A race build
// instruments the code, and the compiler then leaves out its append(x, make([]T, n)...) optimization,
// so the make in bytes.growSlice is allocated once on its own and once more by the append.
const bufferAllocs = 2
