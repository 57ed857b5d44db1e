package instancetypes

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// branchTableJSON is data/branch-enis.json: the branch network interfaces (vpc.amazonaws.com/pod-eni,
// the pods that can get security groups of their own) of every instance type that supports ENI
// trunking. EC2 does not report them; data/README.md says where they come from and how to regenerate
// the file.
//
//go:embed data/branch-enis.json
var branchTableJSON []byte

// BranchTable is the shipped branch-interface table.
type BranchTable struct {
	Source      string           `json:"source"`
	GeneratedAt string           `json:"generatedAt"`
	Types       map[string]int64 `json:"types"`
}

var branchTable = sync.OnceValues(func() (BranchTable, error) { return ParseBranchTable(branchTableJSON) })

// BranchInterfaces is the number of branch network interfaces of an instance type, 0 for a type that
// does not support trunking or that the shipped table does not know (a type newer than the table), as
// Karpenter counts them.
func BranchInterfaces(instanceType string) int64 {
	t, err := branchTable()
	if err != nil {
		// The embedded file is checked by TestTheShippedBranchTableParses; a broken build advertises none.
		return 0
	}
	return t.Types[instanceType]
}

// ParseBranchTable reads and checks a branch-interface table: a source and date, and no negative count.
func ParseBranchTable(b []byte) (BranchTable, error) {
	var t BranchTable
	if err := json.Unmarshal(b, &t); err != nil {
		return BranchTable{}, fmt.Errorf("branch interface table: %w", err)
	}
	if t.Source == "" {
		return BranchTable{}, fmt.Errorf("branch interface table: no source")
	}
	if _, err := time.Parse(time.RFC3339, t.GeneratedAt); err != nil {
		return BranchTable{}, fmt.Errorf("branch interface table: generatedAt: %w", err)
	}
	for name, n := range t.Types {
		if n < 0 {
			return BranchTable{}, fmt.Errorf("branch interface table: %s has %d branch interfaces", name, n)
		}
	}
	return t, nil
}

// EncodeBranchTable writes t one type per line, sorted, so a regeneration diffs by type.
func EncodeBranchTable(t BranchTable) ([]byte, error) {
	head, err := json.Marshal(struct {
		Source      string `json:"source"`
		GeneratedAt string `json:"generatedAt"`
	}{t.Source, t.GeneratedAt})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(string(head), "}"))
	b.WriteString(`,"types":{` + "\n")
	names := make([]string, 0, len(t.Types))
	for n := range t.Types {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		key, _ := json.Marshal(n)
		fmt.Fprintf(&b, "%s:%d", key, t.Types[n])
		if i < len(names)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}}\n")
	return []byte(b.String()), nil
}
