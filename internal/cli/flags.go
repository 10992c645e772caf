package cli

import (
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/runspec"
)

// bindRunFlags registers every run flag on fs, bound to s: the settings of runspec.Spec
// (runspec/flags.go), then a feature's own flags, one line each.
func bindRunFlags(fs *pflag.FlagSet, s *runspec.Spec) {
	runspec.BindFlags(fs, s)
}

// userSpec is the spec the user asked for: defaults, then the --config YAML file, then the
// flags given on the command line (which override the file), each marked as set; validated,
// not resolved. Flags named in own belong to the command, not to the spec.
func userSpec(cmd *cobra.Command, flags *runspec.Spec, path string, own ...string) (runspec.Spec, error) {
	s := *flags
	if path != "" {
		s = runspec.Default()
		if err := s.LoadFile(cmd.Context(), path); err != nil {
			return s, err
		}
	}
	keys := runspec.Keys()
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if slices.Contains(keys, f.Name) && !slices.Contains(own, f.Name) {
			s.CopyFlag(flags, f.Name)
		}
	})
	if s.APIKey == "" {
		s.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	return s, s.Validate()
}
