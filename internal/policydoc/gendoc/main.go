// Command gendoc writes compare's decision table, docs/compare-policy.md, from
// compare.DefaultPolicy, and docs/compare-recorded.md, the rates and the ablation of the
// policy on the recorded sets (compare/testdata/recorded; it judges them all, once per rule). Run it from the repository root after changing a rule or a
// constant: go run ./internal/policydoc/gendoc
package main

import (
	"flag"
	"fmt"
	"os"

	"servebench/internal/policydoc"
)

func main() {
	policyOnly := flag.Bool("policy", false, "write docs/compare-policy.md alone (judging the recorded sets takes minutes)")
	flag.Parse()
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
