// Command gendoc writes compare's decision table, docs/compare-policy.md, from
// compare.DefaultPolicy, and docs/compare-recorded.md, the rates and the ablation of the
// policy on the recorded sets (compare/testdata/recorded; it judges them all, once per rule). Run it from the repository root after changing a rule or a
// constant: go run ./internal/policydoc/gendoc
package main

import (
	"fmt"
	"os"

	"servebench/internal/policydoc"
)

func main() {
	if err := policydoc.Write(policydoc.Path); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
	if err := policydoc.WriteRecorded(policydoc.RecordedDir, policydoc.RecordedPath); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
