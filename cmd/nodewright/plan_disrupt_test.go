package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func disruptFile(name string) string { return filepath.Join("testdata", "disrupt", name) }

// scenarioFiles are the inputs of one scenario under testdata/disrupt.
func scenarioFiles(scenario string) disruptFiles {
	f := disruptFiles{
		pods: disruptFile(scenario + "/pods.json"), nodes: disruptFile(scenario + "/nodes.json"),
		nodePools: disruptFile("nodepools.yaml"), catalog: disruptFile("instance-types.json"),
		daemonSets: disruptFile("daemonsets.yaml"),
	}
	if _, err := os.Stat(disruptFile(scenario + "/pdbs.json")); err == nil {
		f.pdbs = disruptFile(scenario + "/pdbs.json")
	}
	return f
}

// runDisruptJSON runs plan --disrupt -o json on files and requires it to succeed.
func runDisruptJSON(t *testing.T, files disruptFiles, extra ...string) []byte {
	t.Helper()
	code, out, errOut := runPlanArgs(t, files.args(append(extra, "-o", "json")...)...)
	require.Equal(t, 0, code, errOut)
	return []byte(out)
}

// TestPlanDisruptScenarios runs the dry run on each scenario, holds the JSON to the contract with
// the independent checker, and checks what each scenario is about.
func TestPlanDisruptScenarios(t *testing.T) {
	cases := []struct {
		scenario  string
		args      []string
		disrupted []string
		ticks     int
		// kept maps a kept node to a part of its reason.
		kept  map[string]string
		check func(t *testing.T, doc contractDoc)
	}{
		{
			scenario: "empty", disrupted: []string{"e1"}, ticks: 1,
			kept: map[string]string{"w1": "costs less"},
			check: func(t *testing.T, doc contractDoc) {
				c := doc.Commands[0]
				assert.Equal(t, "empty", c.Method)
				assert.Equal(t, "delete", c.Action)
				assert.Empty(t, c.Moves, "the DaemonSet pod does not move")
				assert.InDelta(t, 0.096, c.SavingsPerHour, 1e-9)
			},
		},
		{
			scenario: "repack", disrupted: []string{"u1", "u2", "u3"}, ticks: 1,
			kept: map[string]string{"r-1": "costs less"},
			check: func(t *testing.T, doc contractDoc) {
				c := doc.Commands[0]
				assert.Equal(t, "multi", c.Method)
				assert.Equal(t, "replace", c.Action)
				require.Len(t, c.Replacements, 1)
				r := c.Replacements[0]
				assert.Equal(t, "r-1", r.Name)
				assert.Less(t, r.PricePerHour, 3*0.384)
				assert.Len(t, c.Moves, 3)
				for _, m := range c.Moves {
					assert.Equal(t, "r-1", m.To)
				}
				assert.InDelta(t, 3*0.384-r.PricePerHour, c.SavingsPerHour, 1e-6)
				assert.InDelta(t, r.PricePerHour, *doc.CostAfterPerHour, 1e-6)
			},
		},
		{
			scenario: "pdb", disrupted: []string{"p2"}, ticks: 1,
			kept: map[string]string{"p1": "PodDisruptionBudget default/guarded allows no disruption"},
			check: func(t *testing.T, doc contractDoc) {
				require.Len(t, doc.Commands[0].Moves, 1)
				assert.Equal(t, "p1", doc.Commands[0].Moves[0].To)
			},
		},
		{
			scenario: "donotdisrupt", disrupted: []string{"d2"}, ticks: 1,
			kept: map[string]string{"d1": "karpenter.sh/do-not-disrupt"},
		},
		{
			scenario: "budget", disrupted: []string{"l1", "l2", "l3"}, ticks: 3,
			kept: map[string]string{"l4": "disruption budget for Underutilized"},
			check: func(t *testing.T, doc contractDoc) {
				for i, c := range doc.Commands {
					assert.Equal(t, i+1, c.Tick, "a budget of 1 lets one node go per tick")
					assert.Len(t, c.Nodes, 1)
				}
			},
		},
		{
			scenario: "whenempty", disrupted: []string{"b1"}, ticks: 1,
			kept: map[string]string{"b2": "WhenEmpty"},
		},
		{
			// spot nodes are replaced by a cheaper spot node only with --spot-to-spot
			scenario: "spot", disrupted: nil, ticks: 0,
			kept: map[string]string{"s1": "no consolidation", "s2": "no consolidation", "s3": "no consolidation"},
		},
		{
			// pool steady is Balanced: replacing b1 saves too little for its disruption
			scenario: "balanced", disrupted: nil, ticks: 0,
			kept: map[string]string{"b1": "the Balanced policy rejects the move: NodePool steady scores 0.46 < 0.50", "k1": "karpenter.sh/do-not-disrupt"},
			check: func(t *testing.T, doc contractDoc) {
				require.Len(t, doc.RejectedMoves, 1)
				m := doc.RejectedMoves[0]
				assert.Equal(t, []string{"b1"}, m.Nodes)
				assert.Equal(t, "replace", m.Action)
				assert.InDelta(t, 0.384-0.17, m.SavingsPerHour, 1e-9)
				assert.False(t, m.Score.Approved)
				assert.InDelta(t, ((0.384-0.17)/0.768)/(3.0/5.0), m.Score.Score, 1e-9)
			},
		},
		{
			scenario: "spot", args: []string{"--spot-to-spot"}, disrupted: []string{"s1", "s2", "s3"}, ticks: 1,
			kept: map[string]string{"r-1": "costs less"},
			check: func(t *testing.T, doc contractDoc) {
				c := doc.Commands[0]
				assert.Equal(t, "multi", c.Method, "a single spot node needs 15 cheaper spot types; the catalog has fewer")
				require.Len(t, c.Replacements, 1)
				assert.Equal(t, "spot", c.Replacements[0].CapacityType)
			},
		},
	}
	for _, tc := range cases {
		t.Run(strings.Join(append([]string{tc.scenario}, tc.args...), " "), func(t *testing.T) {
			files := scenarioFiles(tc.scenario)
			out := runDisruptJSON(t, files, tc.args...)
			violations, sum, err := checkDisruptContract(files, out)
			require.NoError(t, err)
			assert.Empty(t, violations)
			assert.ElementsMatch(t, tc.disrupted, sum.disrupted)
			assert.Equal(t, tc.ticks, sum.ticks)
			require.Len(t, sum.kept, len(tc.kept))
			for node, reason := range tc.kept {
				assert.Contains(t, sum.kept[node], reason, node)
			}
			var doc contractDoc
			require.NoError(t, json.Unmarshal(out, &doc))
			if tc.check != nil {
				tc.check(t, doc)
			}
		})
	}
}

// TestPlanDisruptTable: the table shows the commands tick by tick with why, the kept nodes with
// why, and the costs.
func TestPlanDisruptTable(t *testing.T) {
	code, out, errOut := runPlanArgs(t, scenarioFiles("budget").args()...)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{
		"TICK", "REASON", "SAVES $/H",
		"1. tick 1: Deleting node l1", "3. tick 3: Deleting node l3",
		"KEPT NODE", "l4", "disruption budget for Underutilized",
		"commands: 3 over 4 ticks", "cost: $0.4800/h before, $0.1920/h after; saves $0.2880/h (60.0%)", "solve: ",
	} {
		assert.Contains(t, out, want)
	}
	code, out, errOut = runPlanArgs(t, scenarioFiles("repack").args()...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "r-1: c5.xlarge on-demand us-east-1a $0.1700/h")
}

// TestPlanDisruptBalancedScores: with NodePool default Balanced, the repack scenario's command carries
// its score (0.982/1.152 of the pool's cost saved for all of its disruption: 0.85, approved) in the
// JSON and the table; the balanced scenario's table lists the move it rejects with its score.
func TestPlanDisruptBalancedScores(t *testing.T) {
	pools, err := os.ReadFile(disruptFile("nodepools.yaml"))
	require.NoError(t, err)
	balanced := strings.Replace(string(pools), "consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s",
		"consolidationPolicy: Balanced\n    consolidateAfter: 30s", 1)
	require.NotEqual(t, string(pools), balanced)
	files := scenarioFiles("repack")
	files.nodePools = filepath.Join(t.TempDir(), "nodepools.yaml")
	require.NoError(t, os.WriteFile(files.nodePools, []byte(balanced), 0o600))

	out := runDisruptJSON(t, files)
	violations, _, err := checkDisruptContract(files, out)
	require.NoError(t, err)
	assert.Empty(t, violations)
	var doc contractDoc
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Len(t, doc.Commands, 1)
	s := doc.Commands[0].Score
	require.NotNil(t, s)
	assert.True(t, s.Approved)
	assert.InDelta(t, (3*0.384-0.17)/(3*0.384), s.Score, 1e-9)
	assert.Empty(t, doc.RejectedMoves)

	code, table, errOut := runPlanArgs(t, files.args()...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, table, "Balanced: NodePool default scores 0.85 >= 0.50 (k 2: saves 85.2% of its cost for 100.0% of its disruption cost)")

	code, table, errOut = runPlanArgs(t, scenarioFiles("balanced").args()...)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"REJECTED MOVE (BALANCED)", "SCORE", "THRESHOLD",
		"rejected: NodePool steady scores 0.46 < 0.50 (k 2: saves 27.9% of its cost for 60.0% of its disruption cost)"} {
		assert.Contains(t, table, want)
	}
}

// TestPlanDisruptUsage: the flags of the dry run are refused where they make no sense, and bad
// input names its file.
func TestPlanDisruptUsage(t *testing.T) {
	files := scenarioFiles("pdb")
	code, _, errOut := runPlanArgs(t, "--pods", files.pods, "--nodes", files.nodes, "--nodepools", files.nodePools,
		"--instance-types", files.catalog, "--pdbs", files.pdbs)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--pdbs and --spot-to-spot need --disrupt")

	code, _, errOut = runPlanArgs(t, "--disrupt", "--pods", files.pods, "--nodepools", files.nodePools, "--instance-types", files.catalog)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--disrupt needs --nodes")

	bad := files
	bad.pdbs = files.pods // Pods where PDBs are expected
	code, _, errOut = runPlanArgs(t, bad.args()...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, files.pods)
	assert.Contains(t, errOut, `kind "Pod", want PodDisruptionBudget`)

	broken := filepath.Join(t.TempDir(), "pdbs.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("apiVersion: policy/v1\nkind: PodDisruptionBudget\nspec: [\n"), 0o644))
	bad.pdbs = broken
	code, _, errOut = runPlanArgs(t, bad.args()...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, broken)

	dup := filepath.Join(t.TempDir(), "nodes.json")
	data, err := os.ReadFile(files.nodes)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dup, append(append(data, '\n'), data...), 0o644))
	bad = files
	bad.nodes = dup
	code, _, errOut = runPlanArgs(t, bad.args()...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "node p1 appears more than once")
}

// TestPlanDisruptHelp: --help states the dry run's assumptions.
func TestPlanDisruptHelp(t *testing.T) {
	code, _, errOut := runPlanArgs(t, "--help")
	assert.Equal(t, 0, code)
	for _, want := range []string{"--disrupt", "--pdbs", "last pod event is\ntaken as long ago", "Scheduled budgets are treated as always active"} {
		assert.Contains(t, errOut, want)
	}
}

// TestDisruptContractCheckerCatches proves the checker can fail: each mutation of a valid output
// breaks one rule, and the checker names it.
func TestDisruptContractCheckerCatches(t *testing.T) {
	type doc = map[string]any
	mutations := []struct {
		name, scenario, want string
		mutate               func(d doc)
	}{
		{"a pod without a move", "pdb", "has no move", func(d doc) {
			jsonCommand(d, 0)["moves"] = []any{}
		}},
		{"a move to a node the command disrupts", "pdb", "which the command disrupts", func(d doc) {
			move(d, 0, 0)["to"] = "p2"
		}},
		{"a move to a node that does not exist", "pdb", "unknown node", func(d doc) {
			move(d, 0, 0)["to"] = "nowhere"
		}},
		{"wrong savings", "repack", "savingsPerHour", func(d doc) {
			jsonCommand(d, 0)["savingsPerHour"] = 1.0
		}},
		{"a replacement priced off the catalog", "repack", "priced", func(d doc) {
			replacement(d, 0)["pricePerHour"] = 0.01
		}},
		{"an option too small for the pods moved", "repack", "cannot hold", func(d doc) {
			r := replacement(d, 0)
			r["instanceTypeOptions"] = append(r["instanceTypeOptions"].([]any), "m5.large")
		}},
		{"an option not offered", "repack", "is not offered", func(d doc) {
			r := replacement(d, 0)
			r["instanceTypeOptions"] = append(r["instanceTypeOptions"].([]any), "m9.huge")
		}},
		{"two ticks' commands in one tick beyond the budget", "budget", "budget for Empty allows 1", func(d doc) {
			jsonCommand(d, 1)["tick"] = 1.0
			jsonCommand(d, 2)["tick"] = 2.0
		}},
		{"a node kept after it was disrupted", "empty", "not a remaining Nodewright node", func(d doc) {
			d["kept"] = append(d["kept"].([]any), map[string]any{"node": "e1", "reason": "x"})
		}},
		{"a node missing from kept", "empty", "is not in kept", func(d doc) {
			d["kept"] = []any{}
		}},
		{"the do-not-disrupt node disrupted", "donotdisrupt", "do-not-disrupt pod", func(d doc) {
			jsonCommand(d, 0)["nodes"] = []any{"d1"}
		}},
		{"the PDB-guarded node disrupted", "pdb", "PDB allows no disruption", func(d doc) {
			jsonCommand(d, 0)["nodes"] = []any{"p1", "p2"}
		}},
		{"a WhenEmpty node with pods disrupted", "whenempty", "WhenEmpty NodePool", func(d doc) {
			jsonCommand(d, 0)["nodes"] = []any{"b2"}
		}},
		{"a replacement disrupted in its own tick", "repack", "disrupted in the tick that launched it", func(d doc) {
			d["commands"] = append(d["commands"].([]any), map[string]any{
				"tick": 1.0, "reason": "Empty", "method": "empty", "action": "delete", "nodes": []any{"r-1"},
				"replacements": []any{}, "moves": []any{}, "savingsPerHour": 0.17, "why": "x",
			})
		}},
		{"cost before not from the catalog", "empty", "costBeforePerHour", func(d doc) {
			d["costBeforePerHour"] = 9.0
		}},
		{"a field the contract does not have", "empty", "not the contract's JSON", func(d doc) {
			d["extra"] = true
		}},
		{"a rejected move's score not below the threshold", "balanced", "NodePool steady scores", func(d doc) {
			d["rejectedMoves"].([]any)[0].(map[string]any)["score"].(map[string]any)["pools"].([]any)[0].(map[string]any)["approved"] = true
		}},
		{"a rejected move's score not what its fractions give", "balanced", "is not (", func(d doc) {
			d["rejectedMoves"].([]any)[0].(map[string]any)["score"].(map[string]any)["pools"].([]any)[0].(map[string]any)["score"] = 0.3
		}},
		{"a rejected move listed as approved", "balanced", "an approved move listed as rejected", func(d doc) {
			s := d["rejectedMoves"].([]any)[0].(map[string]any)["score"].(map[string]any)
			s["approved"] = true
		}},
		{"a score on a command of no Balanced pool", "repack", "none of its NodePools is Balanced", func(d doc) {
			jsonCommand(d, 0)["score"] = map[string]any{"score": 1.0, "threshold": 0.5, "k": 2.0, "approved": true, "pools": []any{}}
		}},
		{"rejectedMoves missing", "empty", "rejectedMoves must be present", func(d doc) {
			delete(d, "rejectedMoves")
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			files := scenarioFiles(m.scenario)
			out := runDisruptJSON(t, files)
			violations, _, err := checkDisruptContract(files, out)
			require.NoError(t, err)
			require.Empty(t, violations, "the unmodified output passes")
			var d doc
			require.NoError(t, json.Unmarshal(out, &d))
			m.mutate(d)
			mutated, err := json.Marshal(d)
			require.NoError(t, err)
			violations, _, err = checkDisruptContract(files, mutated)
			if err != nil {
				assert.Contains(t, err.Error(), m.want)
				return
			}
			assert.Contains(t, strings.Join(violations, "\n"), m.want)
		})
	}
}

func jsonCommand(d map[string]any, i int) map[string]any {
	return d["commands"].([]any)[i].(map[string]any)
}

func move(d map[string]any, c, i int) map[string]any {
	return jsonCommand(d, c)["moves"].([]any)[i].(map[string]any)
}

func replacement(d map[string]any, c int) map[string]any {
	return jsonCommand(d, c)["replacements"].([]any)[0].(map[string]any)
}
