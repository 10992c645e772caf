package policydoc

import (
	"fmt"
	"os"
	"strings"

	"servebench/metrics"
	"servebench/policy"
)

// SteadyPath is the steady check's decision table, relative to the repository root.
const SteadyPath = "docs/steady-policy.md"

// SteadyMarkdown is the page for the steady check's policy p: how to read a trace, the rules
// in order, the constants.
func SteadyMarkdown(p metrics.Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The steady-state check's policy, version %s\n\n", p.Version)
	b.WriteString(`<!-- Generated from metrics.SteadyPolicy by ` + "`go run ./internal/policydoc/gendoc`" + `; a test fails when it is stale. -->

The steady-state check (the ` + "`steady`" + ` line that opens every run's report) applies the rules below,
**in this order**. Its verdict and each finding (a drift, the initial transient, unbounded
queueing) carry their trace: the rules that fired, in this order, with the figures each read
(` + "`run --explain`" + ` and ` + "`report --explain`" + ` in text; ` + "`steady_state.why`" + ` in
` + "`--format json`" + `, beside ` + "`steady_state.policy_version`" + `; the HTML report under the
verdict, on demand). A step marked → (` + "`\"changed\": true`" + `) set or cleared a finding.
With the table and a trace's figures the verdict can be redone by hand: for a series, p is
min(1, 2·min(p_mk, p_step)) and it drifts when p < α and change ≥ ` + "`min_change`" + `.
The method is in [metrics.md](metrics.md#steady-state); the rates measured on recorded runs,
and what each rule changes on them, are in [steady-evidence.md](steady-evidence.md).

`)
	fmt.Fprintf(&b, "%d rules, %d named constants.\n\n", len(p.Rules), p.Constants())
	b.WriteString("| # | rule | condition | reads | effect | constants |\n|---|---|---|---|---|---|\n")
	ids := make([]string, len(p.Rules))
	consts := make([][]policy.Constant, len(p.Rules))
	for i, r := range p.Rules {
		ids[i], consts[i] = r.ID, r.Constants
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s | %s |\n", i+1, r.ID, cell(r.Condition),
			cell(strings.Join(r.Reads, "; ")), cell(r.Effect), constantList(r.Constants))
	}
	constantsTable(&b, ids, consts, false)
	return b.String()
}

// WriteSteady writes the page for metrics.SteadyPolicy to path.
func WriteSteady(path string) error {
	return os.WriteFile(path, []byte(SteadyMarkdown(metrics.SteadyPolicy)), 0o644)
}
