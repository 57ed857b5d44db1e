package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// MirrorRow is one row of `kubectl get nodeclaims.nodewright.sh -o wide`: the cells by column name
// (Name, Type, Capacity, Zone, Node, Ready, Age, ImageID, ID, NodePool, NodeClass, Drifted).
type MirrorRow map[string]string

// NodeClaimView reads the NodeClaim mirrors as `kubectl get nodeclaims.nodewright.sh -o wide` does: a
// Table request, whose columns the API server fills from the CRD's printer columns. It returns the
// columns in the server's order and the rows by name.
func (s *Sandbox) NodeClaimView(ctx context.Context) ([]string, map[string]MirrorRow, error) {
	return s.MirrorView(ctx, mirror.NodeClaims)
}

// MirrorView reads one kind's mirrors as `kubectl get <plural>.nodewright.sh -o wide` does (see
// NodeClaimView).
func (s *Sandbox) MirrorView(ctx context.Context, k mirror.Kind) ([]string, map[string]MirrorRow, error) {
	hc, err := rest.HTTPClientFor(s.CP.Config)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.CP.Config.Host+"/apis/"+mirror.APIVersion+"/"+k.Plural+"?includeObject=None", nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the %s mirrors' table: %w", k.Kind, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("reading the %s mirrors' table: %s: %s", k.Kind, resp.Status, body)
	}
	var tab metav1.Table
	if err := json.Unmarshal(body, &tab); err != nil {
		return nil, nil, fmt.Errorf("decoding the %s mirrors' table: %w", k.Kind, err)
	}
	cols := make([]string, len(tab.ColumnDefinitions))
	for i, c := range tab.ColumnDefinitions {
		cols[i] = c.Name
	}
	rows := map[string]MirrorRow{}
	for _, r := range tab.Rows {
		row := MirrorRow{}
		for i, c := range cols {
			if i < len(r.Cells) && r.Cells[i] != nil {
				row[c] = fmt.Sprint(r.Cells[i])
			}
		}
		rows[row["Name"]] = row
	}
	return cols, rows, nil
}

// printNodeClaimView writes the view to the timeline as kubectl prints it ("<none>" for an empty cell).
func (s *Sandbox) printNodeClaimView(ctx context.Context) {
	s.printMirrorView(ctx, mirror.NodeClaims, "-o wide")
}

// printMirrorView writes one kind's view to the timeline as `kubectl get <plural>.nodewright.sh <flags>`
// prints it.
func (s *Sandbox) printMirrorView(ctx context.Context, k mirror.Kind, flags string) {
	cols, rows, err := s.MirrorView(ctx, k)
	if err != nil {
		s.Timeline.Printf("mirrors", "%v", err)
		return
	}
	names := slices.Sorted(maps.Keys(rows))
	table := [][]string{make([]string, len(cols))}
	for i, c := range cols {
		table[0][i] = strings.ToUpper(c)
	}
	for _, n := range names {
		line := make([]string, len(cols))
		for i, c := range cols {
			if line[i] = rows[n][c]; line[i] == "" {
				line[i] = "<none>"
			}
		}
		table = append(table, line)
	}
	widths := make([]int, len(cols))
	for _, line := range table {
		for i, cell := range line {
			widths[i] = max(widths[i], len(cell))
		}
	}
	s.Timeline.Printf("mirrors", "%s", strings.TrimSpace("$ kubectl get "+k.Plural+"."+mirror.Group+" "+flags))
	for _, line := range table {
		var b strings.Builder
		for i, cell := range line {
			fmt.Fprintf(&b, "%-*s   ", widths[i], cell)
		}
		s.Timeline.Printf("mirrors", "%s", strings.TrimRight(b.String(), " "))
	}
}
