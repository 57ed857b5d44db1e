package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// Records reads EMF output back the way CloudWatch Logs takes it: one JSON object per non-empty line,
// each carrying the _aws metadata of the Nodewright namespace. Tests and tools use it to see what a
// function reported; a line that is not such a record is an error naming the line.
func Records(data []byte) ([]map[string]any, error) {
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if MetricNames(rec) == nil {
			return nil, fmt.Errorf("line %d: not an EMF record of namespace %s", n, Namespace)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// MetricNames are the metrics an EMF record defines (nil when it is not a record of Namespace).
func MetricNames(rec map[string]any) []string {
	meta, _ := rec["_aws"].(map[string]any)
	directives, _ := meta["CloudWatchMetrics"].([]any)
	var names []string
	for _, d := range directives {
		dir, _ := d.(map[string]any)
		if dir["Namespace"] != Namespace {
			continue
		}
		defs, _ := dir["Metrics"].([]any)
		for _, def := range defs {
			if m, ok := def.(map[string]any); ok {
				if name, ok := m["Name"].(string); ok {
					names = append(names, name)
				}
			}
		}
	}
	return names
}
