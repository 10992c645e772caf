// Package policydoc writes compare's decision table, docs/compare-policy.md, from the policy
// value itself (compare.DefaultPolicy), so the table cannot drift from the code that applies it.
package policydoc

import (
	"fmt"
	"os"
	"strings"

	"servebench/compare"
	"servebench/policy"
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
trace's figures the verdict can be redone by hand. The method is in
[metrics.md](metrics.md#comparing-runs-intervals-verdicts-and-how-often-they-are-wrong); the
rates measured on recorded runs, and what each rule changes on them, are in
[compare-recorded.md](compare-recorded.md), and the measurements behind the rules in
[compare-evidence.md](compare-evidence.md).

Scope: *runs* rules look at each side's runs before any metric; *row* rules at one metric (in
the trace of its row); *verdict* rules at the whole comparison (in the verdict's trace).

`)
	fmt.Fprintf(&b, "%d rules, %d named constants: %d tuned, %d the defaults of options.\n\n", len(p.Rules), p.Constants(), p.Tuned(), p.Constants()-p.Tuned())
	b.WriteString("| # | rule | scope | condition | reads | effect | constants |\n|---|---|---|---|---|---|---|\n")
	ids := make([]string, len(p.Rules))
	consts := make([][]policy.Constant, len(p.Rules))
	for i, r := range p.Rules {
		ids[i], consts[i] = r.ID, r.Constants
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s | %s | %s |\n", i+1, r.ID, r.Scope, cell(r.Condition),
			cell(strings.Join(r.Reads, "; ")), cell(r.Effect), constantList(consts[i]))
	}
	constantsTable(&b, ids, consts, true)
	return b.String()
}

// constantList is a rule's constants for its row of the decision table.
func constantList(cs []policy.Constant) string {
	var out []string
	for _, c := range cs {
		v := fmt.Sprintf("%g", c.Value)
		if c.Unit != "" {
			v = fmt.Sprintf("%g (%s)", c.Value, cell(c.Unit))
		}
		out = append(out, fmt.Sprintf("`%s` = %s", c.Name, v))
	}
	return strings.Join(out, "<br>")
}

// constantsTable writes a policy's constants section: each rule's (ids[i]) constants, with
// their kind (tuned or an option's default) where kinds is set.
func constantsTable(b *strings.Builder, ids []string, consts [][]policy.Constant, kinds bool) {
	if kinds {
		b.WriteString("\n## Constants\n\n| constant | value | unit | kind | rule |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("\n## Constants\n\n| constant | value | unit | rule |\n|---|---|---|---|\n")
	}
	for i, cs := range consts {
		for _, c := range cs {
			if kinds {
				fmt.Fprintf(b, "| `%s` | %g | %s | %s | `%s` |\n", c.Name, c.Value, cell(c.Unit), kindName(c.Kind), ids[i])
				continue
			}
			fmt.Fprintf(b, "| `%s` | %g | %s | `%s` |\n", c.Name, c.Value, cell(c.Unit), ids[i])
		}
	}
}

// kindName is a constant's kind in words.
func kindName(k string) string {
	if k == policy.Tuned {
		return "tuned"
	}
	return k
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
