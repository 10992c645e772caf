package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/report"
	"servebench/runspec"
	"servebench/sim"
)

// valueWords are the words --help shows for flag value types that pflag would print as Go
// type names (float64Slice, durationSlice, FaultList).
// (pflag words the others itself; a repeatable string flag names its value in its usage.)
var valueWords = map[string]string{"durationSlice": "durations", "float64Slice": "numbers", "FaultList": "fault", "stringArray": "string"}

// worded is a flag value whose type reads as a word in --help.
type worded struct {
	pflag.Value
	word string
}

func (w worded) Type() string { return w.word }

// wordTypes renames the value types of every flag of cmd and below to words.
func wordTypes(cmd *cobra.Command) {
	rename := func(f *pflag.Flag) {
		if w, ok := valueWords[f.Value.Type()]; ok {
			f.Value = worded{f.Value, w}
			if f.DefValue == "[]" {
				f.DefValue = "" // pflag knows an empty list only by its own types
			}
		}
	}
	cmd.Flags().VisitAll(rename)
	cmd.PersistentFlags().VisitAll(rename)
	for _, c := range cmd.Commands() {
		wordTypes(c)
	}
}

// enumerated are the values each enumerated flag takes, for shell completion.
func enumerated() map[string][]string {
	values := runspec.Choices()
	values["model-preset"], values["hardware"] = sim.ModelPresets(), sim.HardwarePresets()
	return values
}

// completeValues registers value completion for every enumerated flag of cmd and below;
// --format completes with the formats of its own command.
func completeValues(cmd *cobra.Command) {
	values := enumerated()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		vs, ok := values[f.Name]
		if f.Name == "format" {
			vs, ok = formatsOf(cmd.Name()), true
		}
		if ok {
			_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp))
		}
	})
	for _, c := range cmd.Commands() {
		completeValues(c)
	}
}

func formatsOf(command string) []string {
	switch command {
	case "report":
		return report.Formats()
	case "compare":
		return report.CompareFormats()
	}
	return []string{"text", "json"}
}

// newVersionCmd is `servebench version`.
func newVersionCmd(std *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print servebench's version, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(std.stdout, "servebench %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// versionFlag defines --version without cobra's -v, which most tools read as verbose.
func versionFlag(root *cobra.Command) {
	root.Flags().Bool("version", false, "print the version ("+strings.TrimSpace("servebench version")+" says more)")
}
