package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestDistance is how many edits away a flag may be to be suggested: cobra's own
// SuggestionsMinimumDistance default for commands, which it does not apply to flags.
const suggestDistance = 2

// flagError makes a flag error a usage error (exit 2) and, for an unknown flag, names the
// nearest flag the command has ("--concurency": did you mean --concurrency?).
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if near := nearestFlag(cmd, name); near != "" {
			err = fmt.Errorf("%s (did you mean --%s?)", msg, near)
		} else {
			err = fmt.Errorf("%s (servebench %s --help lists the flags)", msg, cmd.Name())
		}
	}
	return &exitError{code: ExitUsage, err: err}
}

// nearestFlag returns the name of cmd's flag closest to name within suggestDistance edits
// (or the one name is a prefix of), "" when none is close.
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", suggestDistance+1
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			d = min(d, 1) // "--conc" for "--concurrency"
		}
		if d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes: flag names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// twoFiles is compare's argument check: a message that says what the command takes.
func twoFiles(_ *cobra.Command, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("compare takes two records files, BASELINE.jsonl CANDIDATE.jsonl (got %d): run the candidate, then servebench compare base.jsonl new.jsonl", len(args))
	}
	return nil
}

// someFiles is report's argument check.
func someFiles(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("report takes one or more records files, e.g. servebench report run.jsonl (several: the shards of one run, or base and candidate for --format html)")
	}
	return nil
}
