package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// writeClaimDisruption prints what explain shows of a claim's standing toward disruption: its Drifted
// condition, its expiry and an operator's disruption request.
func writeClaimDisruption(w io.Writer, c state.Claim, exp claimExpiry, now time.Time) {
	if d := c.Drifted; d != nil {
		line := "  drifted: " + orDash(d.Reason) + " since " + d.Since.UTC().Format(time.RFC3339)
		if details := driftDetailText(d.Details); details != "" {
			line += " (" + details + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "  "+exp.long(now))
	if r := c.DisruptionRequest; r != nil {
		line := "  disruption requested " + requestText(r)
		if c.Lifecycle.InService() {
			line += " (pending: the disruption run launches a replacement, then drains the node)"
		}
		fmt.Fprintln(w, line)
	}
}

// driftDetailText prints a drift condition's details in key order, an old and new value of the same thing
// (oldImageId, newImageId) as one "imageId OLD → NEW", the others as key=value.
func driftDetailText(details map[string]string) string {
	keys := make([]string, 0, len(details))
	for k := range details {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		if what, ok := strings.CutPrefix(k, "new"); ok && what != "" {
			if _, paired := details["old"+what]; paired {
				continue // printed with its old value
			}
		}
		if what, ok := strings.CutPrefix(k, "old"); ok && what != "" {
			if newValue, paired := details["new"+what]; paired {
				parts = append(parts, lowerFirst(what)+" "+details[k]+" → "+newValue)
				continue
			}
		}
		parts = append(parts, k+"="+details[k])
	}
	return strings.Join(parts, ", ")
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
