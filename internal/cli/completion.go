package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/report"
	"servebench/runspec"
	"servebench/sim"
)

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
