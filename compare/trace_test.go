package compare

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/sim"
	"servebench/vtime"
)

// TestPolicyWellFormed holds DefaultPolicy to what its table promises: unique IDs, each rule
// with a condition and an effect, constants named once, and the scopes in evaluation order
// (the runs before the rows, the rows before the verdict).
func TestPolicyWellFormed(t *testing.T) {
	p := DefaultPolicy
	if p.Version == "" {
		t.Error("no version")
	}
	scope := map[string]int{"runs": 0, "row": 1, "verdict": 2}
	ids, consts, last := map[string]bool{}, map[string]bool{}, 0
	for _, r := range p.Rules {
		s, ok := scope[r.Scope]
		if !ok || s < last || ids[r.ID] || r.Condition == "" || r.Effect == "" {
			t.Errorf("rule %q: scope %q (after %d), duplicate %v, condition %q, effect %q", r.ID, r.Scope, last, ids[r.ID], r.Condition, r.Effect)
		}
		last, ids[r.ID] = s, true
		for _, c := range r.Constants {
			if consts[c.Name] || c.Name == "" {
				t.Errorf("rule %s: constant %q named twice or unnamed", r.ID, c.Name)
			}
			consts[c.Name] = true
		}
	}
	t.Logf("policy %s: %d rules, %d constants", p.Version, len(p.Rules), p.Constants())
}

// checkTrace checks a trace against the policy: every step names a rule of it, the steps
// are in the policy's order, and the last step that changed something set want.
func checkTrace(t *testing.T, what string, why []Step, want string) {
	t.Helper()
	if len(why) == 0 {
		t.Errorf("%s: empty trace", what)
		return
	}
	prev, set := -1, ""
	for _, s := range why {
		i := DefaultPolicy.Index(s.Rule)
		if i < 0 {
			t.Errorf("%s: step of unknown rule %q", what, s.Rule)
		}
		if i < prev {
			t.Errorf("%s: rule %s fired after %s, against the policy's order", what, s.Rule, DefaultPolicy.Rules[prev].ID)
		}
		prev = max(prev, i)
		if s.Changed {
			set = s.Effect
		}
	}
	if set != want {
		t.Errorf("%s: last changing step set %q, the result is %q (trace %v)", what, set, want, why)
	}
}

// checkResult checks the traces of every row (and of its figures at equal contention) and of
// the verdict.
func checkResult(t *testing.T, name string, res *Result) {
	t.Helper()
	if res.Policy != DefaultPolicy.Version {
		t.Errorf("%s: policy %q, want %q", name, res.Policy, DefaultPolicy.Version)
	}
	for _, row := range res.Rows {
		checkTrace(t, name+": "+row.Metric.Name, row.Why, row.Change)
		if c := row.Contention; c != nil {
			checkTrace(t, name+": "+c.Row.Metric.Name, c.Row.Why, c.Row.Change)
			if c.Lone != nil {
				checkTrace(t, name+": lone "+c.Lone.Metric.Name, c.Lone.Why, c.Lone.Change)
			}
		}
	}
	checkTrace(t, name+": verdict", res.Why, res.Verdict)
}

// virtualSide is runs of the engine model in virtual time (package vtime) with a live run's
// noise, one per seed, as one side's records.
func virtualSide(t *testing.T, c sim.Config, seeds []uint64) *Side {
	t.Helper()
	noise := vtime.Noise{StepJitter: 0.2, StallProb: 0.002, Stall: 50 * time.Millisecond, LateProb: 0.05, Late: 5 * time.Millisecond}
	var s *Side
	for run, seed := range seeds {
		l := vtime.Load{Users: 16, Requests: 480, Warmup: 16, InputTokens: 512, OutputTokens: 64, InputJitter: 0.5, Seed: seed, Noise: noise}
		c.Seed = int64(seed)
		res, err := vtime.Run(t, c, l)
		if err != nil {
			t.Fatal(err)
		}
		if s == nil {
			s = NewSide(res.Header, metrics.Options{})
		}
		for i := range res.Records {
			r := res.Records[i]
			r.Run = run
			s.Add(&r)
		}
	}
	return s
}

// TestTraceVirtualTime judges A/A and A/B pairs of the engine model in virtual time (A/A at
// three runs and at one run a side, ITL slower ×1.15 and ×2) and holds every row's and every
// verdict's trace to the policy: non-empty, in the policy's order, its last changing step
// the row's change (the verdict). The verdicts themselves are the rest of this package's
// tests'.
func TestTraceVirtualTime(t *testing.T) {
	if raceEnabled {
		// the load runner and the engine model in their bubble are run under the race
		// detector by package vtime's own tests; what this one checks, the traces, is judged
		// by one goroutine
		t.Skip("run without the race detector (scripts/test's second pass): the traces are one goroutine's, ten times the time under it")
	}
	t.Parallel() // shares nothing with the other tests: with t.Parallel they use both cores
	base := sim.DefaultConfig()
	slower := func(f float64) sim.Config {
		c := base
		c.BWEfficiency /= f
		return c
	}
	cases := []struct {
		name       string
		cand       sim.Config
		base, seed []uint64
	}{
		{"A/A 3 runs", base, []uint64{1, 2, 3}, []uint64{4, 5, 6}},
		{"A/A 3 runs b", base, []uint64{7, 8, 9}, []uint64{10, 11, 12}},
		{"A/A 1 run", base, []uint64{13}, []uint64{14}},
		{"A/B ITL x1.15", slower(1.15), []uint64{15, 16, 17}, []uint64{18, 19, 20}},
		{"A/B ITL x2", slower(2), []uint64{21, 22, 23}, []uint64{24, 25, 26}},
		{"A/B ITL x2 1 run", slower(2), []uint64{27}, []uint64{28}},
	}
	verdicts := map[string]int{}
	for _, c := range cases {
		res := Compare(virtualSide(t, base, c.base), virtualSide(t, c.cand, c.seed), Options{Expect: []string{"workload.seed"}})
		verdicts[res.Verdict]++
		checkResult(t, c.name, res)
		if c.name == "A/B ITL x2" && res.Verdict != Regressed {
			t.Errorf("%s: verdict %s, want regressed", c.name, res.Verdict)
		}
		if testing.Verbose() {
			t.Logf("%s: %s %s %v", c.name, res.Verdict, fmt.Sprint(res.Why), res.Differences)
		}
	}
	t.Logf("verdicts: %v", verdicts)
}

// TestEveryRuleHasASite: each rule of DefaultPolicy is recorded by some code of this package
// besides the policy itself, so no rule of the table is one the code never applies; and each
// rule ID constant is in the policy.
func TestEveryRuleHasASite(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || name == "policy.go" {
			continue
		}
		src, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(src, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(id.Name, "Rule") {
				used[id.Name] = true
			}
			return true
		})
	}
	ids := map[string]string{}
	f, err := parser.ParseFile(fset, "policy.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(n.Name, "Rule") {
					ids[strings.Trim(lit.Value, `"`)] = n.Name
				}
			}
		}
	}
	if len(ids) != len(DefaultPolicy.Rules) {
		t.Errorf("%d rule ID constants, %d rules in the policy", len(ids), len(DefaultPolicy.Rules))
	}
	for _, r := range DefaultPolicy.Rules {
		name, ok := ids[r.ID]
		if !ok || !used[name] {
			t.Errorf("rule %s (%s): no site records it", r.ID, name)
		}
	}
}

// TestTraceScenarios holds the traces of this package's other scenarios to the policy (the
// pairs whose rows contention explains or clears, a prefix cache that blocks, and the
// generative model's A/A and A/B pairs at one, three and six runs a side) and checks that the
// rules they exist to exercise fire.
func TestTraceScenarios(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine, ten times the time under it")
	}
	t.Parallel() // shares nothing with the other tests: with t.Parallel they use both cores
	fired := map[string]int{}
	check := func(name string, res *Result) {
		t.Helper()
		checkResult(t, name, res)
		for _, row := range res.Rows {
			for _, s := range row.Why {
				fired[s.Rule]++
			}
		}
		for _, s := range res.Why {
			fired[s.Rule]++
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	base := contentionSide(rng, 20, []float64{0.1, 0.3, 0.2})
	check("contention same", Compare(base, contentionSide(rng, 20, []float64{0.6, 0.45, 0.15}), Options{}))
	check("contention slower", Compare(base, contentionSide(rng, 24, []float64{0.2, 0.1, 0.3}), Options{}))
	rng = rand.New(rand.NewPCG(3, 3))
	cohorts := cohortSide(rng, 20, 4, []float64{0.06, 0.08, 0.07})
	check("cohorts", Compare(cohorts, cohortSide(rng, 20, 4, []float64{0, 0, 0}), Options{}))
	check("prefix cache", Compare(side(20, 1), side(20, 63), Options{}))
	check("prefix cache expected", Compare(side(20, 1), side(20, 63), Options{Expect: []string{"prefix_cache"}}))
	rng = rand.New(rand.NewPCG(42, 42))
	for _, runs := range []int{1, 3, 6} {
		for _, factor := range []float64{1, 1, 1, 1.1, 2} {
			check(fmt.Sprintf("model %d runs ×%g", runs, factor), Compare(genSide(rng, defaultModel, runs, 1), genSide(rng, defaultModel, runs, factor), Options{}))
		}
	}
	for _, id := range []string{RuleInterval, RuleTailThreshold, RuleTailOneRun, RuleContention, RuleContentionClears,
		RulePrefixCache, RuleBlocking, RuleVerdict, RuleHolds} {
		if fired[id] == 0 {
			t.Errorf("rule %s never fired in these scenarios", id)
		}
	}
	t.Logf("steps by rule: %v", fired)
}
