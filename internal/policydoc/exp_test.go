package policydoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"servebench/compare"
	"servebench/compare/recorded"
)

// TestPolicyExperiment (SB_EXP=1) judges the recorded sets named in SB_SETS (all when empty)
// under DefaultPolicy and under compare.ExperimentPolicy less the rules named in SB_DROP
// (comma-separated; default: the five the experiment would replace), with the covariate
// SB_COV ("", "log", "fe"), and prints each pair's verdict words, with the rows of each pair
// whose word differs or that is an A/A pair not "no significant change" (every row: SB_ALL=1).
// The figures of docs/compare-evidence.md "One model of contention and of disturbance".
func TestPolicyExperiment(t *testing.T) {
	if os.Getenv("SB_EXP") == "" {
		t.Skip("SB_EXP not set")
	}
	dir := filepath.Join("..", "..", RecordedDir)
	m, err := recorded.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if s := os.Getenv("SB_SETS"); s != "" {
		want = strings.Split(s, ",")
	}
	var keep []recorded.Set
	for _, set := range m.Sets {
		if want == nil || slices.Contains(want, set.Name) {
			keep = append(keep, set)
		}
	}
	m.Sets = keep
	s := &Sets{Manifest: m, sides: map[string]*compare.Side{}}
	for _, set := range m.Sets {
		for _, p := range set.Pairs {
			for _, name := range p {
				if s.sides[name] != nil {
					continue
				}
				raw, err := recorded.Open(dir, name)
				if err != nil {
					t.Fatal(err)
				}
				side, err := compare.ReadSideFrom(bytes.NewReader(raw), filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				s.sides[name] = side
			}
		}
	}
	oldP := compare.DefaultPolicy
	drop := []string{compare.RuleContention, compare.RuleContentionClears, compare.RuleDisturbedRuns, compare.RuleBrieflyDisturbed, compare.RuleDisturbedTail}
	if d := os.Getenv("SB_DROP"); d != "" {
		drop = strings.Split(d, ",")
	}
	newP := compare.ExperimentPolicy(drop...)
	compare.ExperimentCovariate = os.Getenv("SB_COV")
	t.Logf("new policy: %s", newP.Version)
	judge := func(p compare.Policy) [][]*compare.Result {
		out := make([][]*compare.Result, len(m.Sets))
		for i, set := range m.Sets {
			opt, _ := compare.PercentOptions(5, 0, set.Expect)
			opt.Policy = &p
			for _, pair := range set.Pairs {
				b, c := s.sides[pair[0]], s.sides[pair[1]]
				o := opt
				o.Goodput = b.HasSLO() && c.HasSLO()
				out[i] = append(out[i], compare.Compare(b, c, o))
			}
		}
		return out
	}
	word := func(r *compare.Result) string {
		if len(r.Provisional) > 0 {
			return "PROVISIONAL " + r.Verdict
		}
		return r.Verdict
	}
	olds, news := judge(oldP), judge(newP)
	var b strings.Builder
	for i, set := range m.Sets {
		var oo, nn []Outcome
		for j := range olds[i] {
			oo = append(oo, Outcome{olds[i][j].Verdict, olds[i][j].Provisional})
			nn = append(nn, Outcome{news[i][j].Verdict, news[i][j].Provisional})
		}
		one := &Sets{Manifest: &recorded.Manifest{Sets: []recorded.Set{set}}}
		ro, rn := one.Count([][]Outcome{oo})[0], one.Count([][]Outcome{nn})[0]
		ro.Set, rn.Set = set, set
		fmt.Fprintf(&b, "== %s (%s, %d runs): old %s | new %s\n", set.Name, set.Class, set.Runs, keyRate(ro), keyRate(rn))
		for j := range olds[i] {
			o, n := olds[i][j], news[i][j]
			mark := "  "
			if word(o) != word(n) {
				mark = "**"
			}
			fmt.Fprintf(&b, "%s %d: %s -> %s\n", mark, j+1, word(o), word(n))
			if mark == "**" || os.Getenv("SB_ALL") != "" || (set.Class == recorded.AA && n.Verdict != compare.NoChange) {
				for k, row := range n.Rows {
					orow := o.Rows[k]
					if row.Change == "~" && orow.Change == "~" && os.Getenv("SB_ALL") == "" {
						continue
					}
					fmt.Fprintf(&b, "     %-18s old %-16s %+6.1f%% [%+6.1f, %+6.1f]  new %-16s %+6.1f%% [%+6.1f, %+6.1f]",
						row.Metric.Name, orow.Change, 100*orow.Delta, 100*orow.DeltaLo, 100*orow.DeltaHi, row.Change, 100*row.Delta, 100*row.DeltaLo, 100*row.DeltaHi)
					if a := row.Adjusted; a != nil {
						fmt.Fprintf(&b, " slope %.3f mean %.2f lv b%.2f c%.2f", a.Slope, a.Mean, a.BaseLevel, a.CandLevel)
					}
					var rules []string
					for _, st := range row.Why {
						if st.Changed || st.Rule == compare.RuleHolds || st.Rule == compare.RuleTailNotMoved {
							rules = append(rules, st.Rule)
						}
					}
					fmt.Fprintf(&b, " %v\n", rules)
				}
			}
		}
	}
	t.Log("\n" + b.String())
}
