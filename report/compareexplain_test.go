package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"servebench/compare"
)

// TestCompareExplainGolden is `compare --explain`: the comparison, then one table row per
// rule that fired on each metric and on the verdict, with its figures; every step of every
// trace is in it, and a plain rendering has no such section.
func TestCompareExplainGolden(t *testing.T) {
	res := compare.Compare(fakeSide(6, 20, 20, 0.01), fakeSide(6, 20, 25, 0.01), compare.Options{})
	var b bytes.Buffer
	if err := RenderCompareExplained(&b, "text", res, "base.jsonl", "cand.jsonl"); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_explain.golden", b.Bytes())
	out := b.String()
	_, why, ok := strings.Cut(out, "\nwhy: ")
	why, _, _ = strings.Cut(why, "\n(deltas")
	if !ok || !strings.Contains(out, "policy      "+compare.DefaultPolicy.Version) {
		t.Fatalf("no explain section or no policy line:\n%s", out)
	}
	steps := len(res.Why)
	for _, row := range res.Rows {
		steps += len(row.Why)
		for _, s := range row.Why {
			if !strings.Contains(why, s.Rule) {
				t.Errorf("%s: step %s not shown", row.Metric.Name, s.Rule)
			}
		}
	}
	if rows := strings.Count(why, "\n  ") - 1; rows != steps { // minus the table's head
		t.Errorf("explain section has %d rows, the traces %d steps", rows, steps)
	}
	b.Reset()
	if err := RenderCompare(&b, "text", res, "base.jsonl", "cand.jsonl"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\nwhy: ") {
		t.Error("plain text has the explain section")
	}
}

// TestCompareJSONWhy: compare's JSON carries the policy's version and, beside the verdict and
// on each metric, the trace whose last changing step is the verdict (the change).
func TestCompareJSONWhy(t *testing.T) {
	res := compare.Compare(fakeSide(6, 20, 20, 0.01), fakeSide(6, 20, 25, 0.01), compare.Options{})
	var b bytes.Buffer
	if err := CompareJSON(&b, res, "base.jsonl", "cand.jsonl"); err != nil {
		t.Fatal(err)
	}
	type step struct {
		Rule, Effect string
		Changed      bool
		Figures      map[string]*float64
	}
	var doc struct {
		Policy  string `json:"policy_version"`
		Verdict string
		Why     []step
		Metrics []struct {
			Metric, Change string
			Why            []step
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	last := func(why []step) string {
		set := ""
		for _, s := range why {
			if s.Changed {
				set = s.Effect
			}
		}
		return set
	}
	if doc.Policy != compare.DefaultPolicy.Version || last(doc.Why) != doc.Verdict || doc.Verdict != compare.Regressed {
		t.Errorf("policy %q, verdict %q, its trace's last change %q", doc.Policy, doc.Verdict, last(doc.Why))
	}
	for _, m := range doc.Metrics {
		if len(m.Why) == 0 || last(m.Why) != m.Change || m.Why[len(m.Why)-1].Figures == nil && m.Why[len(m.Why)-1].Rule == compare.RuleInterval {
			t.Errorf("%s: change %q, trace %+v", m.Metric, m.Change, m.Why)
		}
	}
}
