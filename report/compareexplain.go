package report

import (
	"fmt"
	"io"
	"strings"

	"servebench/compare"
)

// A comparison's trace: for each row and for the verdict, the rules of compare's policy that
// fired, in order, with the figures they read (compare.Step). JSON always carries it (`why`);
// text shows it as the explain section with `compare --explain`. With docs/compare-policy.md
// (the policy's conditions and constants) a reader can redo the verdict by hand.

// cmpPolicyLine is the line naming the policy that judged the comparison.
func cmpPolicyLine(r *compare.Result) Line {
	return Line{"policy", r.Policy + " (its rules: docs/compare-policy.md)"}
}

// cmpExplainSection is one table row per step: the metric (or "verdict"), the rule, its
// effect and its figures.
func cmpExplainSection(r *compare.Result) *Section {
	t := &Table{Head: []string{"decided", "rule", "effect", "figures"}, Labels: 4}
	add := func(name string, why []compare.Step) {
		for i, s := range why {
			label := ""
			if i == 0 {
				label = name
			}
			effect := s.Effect
			if s.Changed {
				effect = "→ " + effect
			}
			t.Rows = append(t.Rows, []string{label, s.Rule, effect, cmpFigures(s.Figures)})
		}
	}
	for _, row := range r.Rows {
		add(row.Metric.Name, row.Why)
	}
	add("verdict", r.Why)
	head := fmt.Sprintf("why: the rules of policy %s that fired, in its order (docs/compare-policy.md); → marks a rule that set the change", r.Policy)
	return &Section{Name: "explain", Title: "why", Heading: head, Tables: []*Table{t},
		Notes: []string{"deltas and intervals are cand/base − 1; p is two-sided; a dash is an unbounded or undefined figure"}}
}

// cmpFigures is a step's figures as "name=value" pairs, 4 significant figures.
func cmpFigures(fs []compare.Figure) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s=%s", f.Name, cmpFig(f.Value))
	}
	return strings.Join(parts, " ")
}

func cmpFig(v float64) string {
	if s := cmpNum(v); s == dash {
		return s
	}
	return fmt.Sprintf("%.4g", v)
}

// stepJSON is a step in compare's JSON; figures an object in the step's order, non-finite
// values null.
type stepJSON struct {
	Rule    string  `json:"rule"`
	Effect  string  `json:"effect"`
	Changed bool    `json:"changed,omitempty"`
	Figures *object `json:"figures,omitempty"`
}

// cmpWhyJSON is a trace for compare's JSON.
func cmpWhyJSON(why []compare.Step) []stepJSON {
	out := make([]stepJSON, len(why))
	for i, s := range why {
		out[i] = stepJSON{Rule: s.Rule, Effect: s.Effect, Changed: s.Changed}
		if len(s.Figures) > 0 {
			o := &object{}
			for _, f := range s.Figures {
				o.set(f.Name, f.Value)
			}
			out[i].Figures = o
		}
	}
	return out
}

// RenderCompareExplained writes r as RenderCompare does, with the explain section after the
// verdict (`compare --explain`); JSON carries the trace either way.
func RenderCompareExplained(w io.Writer, name string, r *compare.Result, baseName, candName string) error {
	if name != "text" {
		return RenderCompare(w, name, r, baseName, candName)
	}
	var b strings.Builder
	textDocument(&b, compareDocument(r, cmpDocSides{baseName: baseName, candName: candName, explain: true}).Sections)
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}
