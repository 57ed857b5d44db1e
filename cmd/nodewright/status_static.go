package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// staticPoolStatus is one static NodePool's count: replicas desired, nodes current, deleting.
type staticPoolStatus struct {
	Name string `json:"name"`
	provisioning.StaticStatus
}

// readStaticPools reads the stored NodePools (one query of the configuration partition, which holds a
// few hundred items at most) and counts each static one's claims among claims, the claims status read.
// A stored NodePool that does not decode is named in the error.
func readStaticPools(ctx context.Context, store *state.Store, claims []state.Claim) ([]staticPoolStatus, error) {
	items, err := store.ListConfig(ctx, state.KindNodePool)
	if err != nil {
		return nil, fmt.Errorf("reading NodePools: %w", err)
	}
	counts := provisioning.StaticCounts(claims)
	out := []staticPoolStatus{}
	for _, it := range items {
		np := &apis.NodePool{}
		if err := json.Unmarshal([]byte(it.Spec), np); err != nil {
			return nil, fmt.Errorf("NodePool %s: decoding stored spec: %w", it.Name, err)
		}
		if s, ok := provisioning.StaticStatusOf(np, counts); ok {
			out = append(out, staticPoolStatus{Name: np.Name, StaticStatus: s})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// writeStaticPools prints the static NodePools' counts, when there are any.
func writeStaticPools(w io.Writer, pools []staticPoolStatus) {
	if len(pools) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATIC NODEPOOL\tREPLICAS\tCURRENT\tDELETING")
	for _, p := range pools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", p.Name, p.Replicas, p.Nodes, p.Deleting)
	}
	tw.Flush()
}
