// Command gendoc writes compare's decision table, docs/compare-policy.md, from
// compare.DefaultPolicy; the steady check's, docs/steady-policy.md, from metrics.SteadyPolicy;
// and docs/compare-recorded.md, the rates and the ablation of compare's policy on the
// recorded sets (compare/testdata/recorded; it judges them all, once per rule). Run it from
// the repository root after changing a rule or a constant: go run ./internal/policydoc/gendoc
package main

import (
	"flag"
	"fmt"
	"os"

	"servebench/internal/policydoc"
)

func main() {
	policyOnly := flag.Bool("policy", false, "write the two decision tables alone (judging the recorded sets takes minutes)")
	flag.Parse()
	if err := policydoc.WriteSteady(policydoc.SteadyPath); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
	if err := policydoc.Write(policydoc.Path); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
	if *policyOnly {
		return
	}
	if err := policydoc.WriteRecorded(policydoc.RecordedDir, policydoc.RecordedPath); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
