package kubetest

import (
	"bufio"
	"strconv"
	"strings"
)

// SumCounter adds up every sample of the metric name in Prometheus text exposition (one per label set),
// and says whether there was any.
func SumCounter(text, name string) (float64, bool) {
	return SumSamples(text, name, "")
}

// SumSamples is SumCounter over the samples whose labels hold label (`verb="PATCH"`); every sample when
// label is empty.
func SumSamples(text, name, label string) (float64, bool) {
	var sum float64
	found := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue // another metric whose name starts with this one
		}
		if label != "" && !strings.Contains(rest[:max(strings.LastIndex(rest, "}"), 0)], label) {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		sum, found = sum+v, true
	}
	return sum, found
}
