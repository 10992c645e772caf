package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"servebench/conditions"
)

// Conditions renders a condition set as a table of key, value and source, unknowns included
// (an unknown is said, not hidden), with a footnote on how to declare them.
func Conditions(w io.Writer, cs conditions.Set) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "condition\tvalue\tsource")
	unknown := 0
	for _, c := range cs {
		v := c.Value
		if c.Source == conditions.Unknown {
			v, unknown = "?", unknown+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Key, oneLineValue(v), c.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unknown > 0 {
		_, err := fmt.Fprintf(w, "\n%d %s could not be detected: declare them with --condition key=value (repeatable) or --conditions FILE.yaml\n",
			unknown, cmpPlural(unknown, "condition", "conditions"))
		return err
	}
	return nil
}

func oneLineValue(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
