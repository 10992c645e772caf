package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
