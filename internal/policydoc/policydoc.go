// Package policydoc writes compare's decision table, docs/compare-policy.md, from the policy
// value itself (compare.DefaultPolicy), so the table cannot drift from the code that applies it.
package policydoc

import (
	"fmt"
	"os"
	"strings"

	"servebench/compare"
)

// Path is the page, relative to the repository root.
const Path = "docs/compare-policy.md"

// Markdown is the page for policy p: how to read a trace, the rules in order, the constants.
func Markdown(p compare.Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# compare's verdict policy, version %s\n\n", p.Version)
	b.WriteString(`<!-- Generated from compare.DefaultPolicy by ` + "`go run ./internal/policydoc/gendoc`" + `; a test fails when it is stale. -->

` + "`servebench compare`" + ` judges each key metric, then the verdict, by the rules below, **in this
order**. Every row and the verdict carry their trace: the rules that fired, in this order, with
the figures each read (` + "`compare --explain`" + ` in text; ` + "`why`" + ` on each row and beside the
verdict in ` + "`--format json`" + `, with ` + "`policy_version`" + `). A step marked → (` + "`\"changed\": true`" + `)
set the row's change or the verdict; the last such step is the result. With the table and a
trace's figures the verdict can be redone by hand. The method and its measured rates are in
[metrics.md](metrics.md#comparing-runs-intervals-verdicts-and-how-often-they-are-wrong).

Scope: *runs* rules look at each side's runs before any metric; *row* rules at one metric (in
the trace of its row); *verdict* rules at the whole comparison (in the verdict's trace).

`)
	fmt.Fprintf(&b, "%d rules, %d named constants.\n\n", len(p.Rules), p.Constants())
	b.WriteString("| # | rule | scope | condition | reads | effect | constants |\n|---|---|---|---|---|---|---|\n")
	for i, r := range p.Rules {
		var cs []string
		for _, c := range r.Constants {
			cs = append(cs, fmt.Sprintf("`%s` = %s", c.Name, constant(c)))
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s | %s | %s |\n", i+1, r.ID, r.Scope, cell(r.Condition),
			cell(strings.Join(r.Reads, "; ")), cell(r.Effect), strings.Join(cs, "<br>"))
	}
	b.WriteString("\n## Constants\n\n| constant | value | unit | rule |\n|---|---|---|---|\n")
	for _, r := range p.Rules {
		for _, c := range r.Constants {
			fmt.Fprintf(&b, "| `%s` | %g | %s | `%s` |\n", c.Name, c.Value, cell(c.Unit), r.ID)
		}
	}
	return b.String()
}

// constant is a constant's value with its unit.
func constant(c compare.Constant) string {
	if c.Unit == "" {
		return fmt.Sprintf("%g", c.Value)
	}
	return fmt.Sprintf("%g (%s)", c.Value, cell(c.Unit))
}

// cell escapes a table cell's pipes.
func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// Write writes the page for compare.DefaultPolicy to path.
func Write(path string) error {
	return os.WriteFile(path, []byte(Markdown(compare.DefaultPolicy)), 0o644)
}
