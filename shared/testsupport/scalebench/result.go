package scalebench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
)

// Result is one function at one tier, as .bench/scale.json records it: the medians of the repetitions'
// cold runs, and in Steady the medians of their warm repeats.
type Result struct {
	Function           string  `json:"function"`
	Nodes              int     `json:"nodes"`
	Pods               int     `json:"pods"`
	MemoryMB           int     `json:"memoryMB"`
	PeakRSSMB          float64 `json:"peakRSSMB"`
	PeakHeapMB         float64 `json:"peakHeapMB"`
	Seconds            float64 `json:"seconds"`
	APIServerBytesRead int64   `json:"apiserverBytesRead"`
	DynamoReadUnits    float64 `json:"dynamoReadUnits"`
	Steady             Measure `json:"steady"`
	// Runs is how many repetitions the medians are over.
	Runs int `json:"runs"`
	// Failed says what failed a repetition (the function ran out of its deadline or memory); the figures
	// are then measured up to the failure, and no further repetition was made.
	Failed string `json:"failed,omitempty"`
}

// median of each field over ms.
func median(ms []Measure) Measure {
	pick := func(f func(Measure) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Measure{
		PeakRSSMB:          round(pick(func(m Measure) float64 { return m.PeakRSSMB })),
		PeakHeapMB:         round(pick(func(m Measure) float64 { return m.PeakHeapMB })),
		Seconds:            round(pick(func(m Measure) float64 { return m.Seconds })),
		APIServerBytesRead: int64(pick(func(m Measure) float64 { return float64(m.APIServerBytesRead) })),
		DynamoReadUnits:    round(pick(func(m Measure) float64 { return m.DynamoReadUnits })),
	}
}

func round(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// NewResult is the medians of a function's repetitions at a tier.
func NewResult(fn string, tier Tier, runs []ChildResult) Result {
	cold, steady := make([]Measure, len(runs)), make([]Measure, len(runs))
	for i, r := range runs {
		cold[i], steady[i] = r.Cold, r.Steady
	}
	c := median(cold)
	failed := ""
	for _, r := range runs {
		if r.Error != "" {
			failed = r.Error
		}
	}
	return Result{Failed: failed, Function: fn, Nodes: tier.Nodes, Pods: tier.Pods, MemoryMB: runs[0].MemoryMB, PeakRSSMB: c.PeakRSSMB,
		PeakHeapMB: c.PeakHeapMB, Seconds: c.Seconds, APIServerBytesRead: c.APIServerBytesRead, DynamoReadUnits: c.DynamoReadUnits,
		Steady: median(steady), Runs: len(runs)}
}

// WriteResults writes results to path as a JSON array (creating its folder), replacing the file whole.
func WriteResults(path string, results []Result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
