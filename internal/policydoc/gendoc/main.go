// Command gendoc writes compare's decision table, docs/compare-policy.md, from
// compare.DefaultPolicy, and the steady check's, docs/steady-policy.md, from
// metrics.SteadyPolicy. Run it from the repository root after changing a rule or a
// constant: go run ./internal/policydoc/gendoc
package main

import (
	"fmt"
	"os"

	"servebench/internal/policydoc"
)

func main() {
	if err := policydoc.WriteSteady(policydoc.SteadyPath); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
	if err := policydoc.Write(policydoc.Path); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
