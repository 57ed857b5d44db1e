package scalebench

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Measure is what one run of a function cost.
type Measure struct {
	PeakRSSMB          float64 `json:"peakRSSMB"`
	PeakHeapMB         float64 `json:"peakHeapMB"`
	Seconds            float64 `json:"seconds"`
	APIServerBytesRead int64   `json:"apiserverBytesRead"`
	DynamoReadUnits    float64 `json:"dynamoReadUnits"`
}

// Meter measures runs inside the process it runs in: peak RSS from VmHWM (reset before each run through
// /proc/self/clear_refs, so a warm run's peak is its own), peak heap from runtime/metrics sampled every
// 10 ms, wall time, and the API-server bytes and DynamoDB read units its counters saw.
type Meter struct {
	Bytes *ByteCounter
	Units *ReadUnits

	start    time.Time
	peakHeap atomic.Uint64
	stop     chan struct{}
	done     chan struct{}
	// RSSResetFailed is set when the kernel refused to reset VmHWM: the peak then includes earlier runs.
	RSSResetFailed bool
}

// heapMetric is the bytes of live and not-yet-swept heap objects.
const heapMetric = "/memory/classes/heap/objects:bytes"

// Start resets the counters and peaks and starts the clock and the heap sampler.
func (m *Meter) Start() {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		m.RSSResetFailed = true
	}
	m.Bytes.Reset()
	m.Units.Reset()
	m.peakHeap.Store(0)
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go m.sample()
	m.start = time.Now()
}

func (m *Meter) sample() {
	defer close(m.done)
	s := []metrics.Sample{{Name: heapMetric}}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > m.peakHeap.Load() {
			m.peakHeap.Store(v)
		}
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the run and returns its measure.
func (m *Meter) Stop() (Measure, error) {
	took := time.Since(m.start)
	close(m.stop)
	<-m.done
	hwm, err := vmHWM()
	if err != nil {
		return Measure{}, err
	}
	return Measure{PeakRSSMB: mb(hwm), PeakHeapMB: mb(m.peakHeap.Load()), Seconds: took.Seconds(),
		APIServerBytesRead: m.Bytes.Load(), DynamoReadUnits: m.Units.Load()}, nil
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// vmHWM is the process's peak resident set size in bytes.
func vmHWM() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
