package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// memoryStatus is one observation of memory capacity beside the estimate it replaces in planning.
type memoryStatus struct {
	InstanceType string `json:"instanceType"`
	ImageID      string `json:"imageId"`
	ObservedMiB  int64  `json:"observedMiB"`
	// EstimatedMiB is the nominal memory less vmMemoryOverheadPercent (0 when the nominal memory was not
	// recorded).
	EstimatedMiB int64     `json:"estimatedMiB,omitempty"`
	Node         string    `json:"node,omitempty"`
	ObservedAt   time.Time `json:"observedAt"`
	Expires      time.Time `json:"expires"`
}

// readMemory reads the observed memory (one query of its partition) and works out the estimate each
// replaces with the settings' overhead.
func readMemory(ctx context.Context, store *state.Store, overhead float64) ([]memoryStatus, error) {
	list, err := store.MemoryObservations(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]memoryStatus, 0, len(list))
	for _, o := range list {
		m := memoryStatus{InstanceType: o.InstanceType, ImageID: o.ImageID, ObservedMiB: o.MemoryBytes >> 20, Node: o.Node,
			ObservedAt: o.ObservedAt, Expires: o.Expires()}
		if o.NominalMiB > 0 {
			m.EstimatedMiB = scheduling.MemoryCapacity(scheduling.InstanceInfo{MemoryMiB: o.NominalMiB, Architecture: o.Architecture}, overhead) >> 20
		}
		out = append(out, m)
	}
	return out, nil
}

// writeMemory prints the observations, if any.
func writeMemory(w io.Writer, list []memoryStatus, now time.Time) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintln(w, "OBSERVED MEMORY (planned with in place of the estimate while a NodeClass launches the type from the AMI)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tAMI\tOBSERVED MiB\tESTIMATED MiB\tNODE\tEXPIRES IN")
	for _, m := range list {
		est := "-"
		if m.EstimatedMiB > 0 {
			est = strconv.FormatInt(m.EstimatedMiB, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", m.InstanceType, m.ImageID, m.ObservedMiB, est, orDash(m.Node), age(m.Expires.Sub(now)))
	}
	tw.Flush()
	fmt.Fprintln(w)
}
