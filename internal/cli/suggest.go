package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/exitcode"
	"servebench/suggest"
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
	return &exitError{code: exitcode.Usage, err: err}
}

// nearestFlag returns the name of cmd's visible flag closest to name within suggestDistance
// edits (or the one name is a prefix of), "" when none is close.
func nearestFlag(cmd *cobra.Command, name string) string {
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return suggest.Nearest(name, names, suggestDistance)
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
