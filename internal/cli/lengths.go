package cli

import (
	"github.com/spf13/pflag"

	"servebench/runspec"
)

// bindLengthFlags registers the length distributions of a synthetic workload.
func bindLengthFlags(fs *pflag.FlagSet, s *runspec.Spec) {
	fs.StringVar(&s.InputDist, "input-dist", s.InputDist, "draw each prompt's length from normal:MEAN,SD or lognormal:MEAN,SD (tokens; clamped to [1, 2^24]); replaces --input-tokens")
	fs.StringVar(&s.OutputDist, "output-dist", s.OutputDist, "draw each output length from normal:MEAN,SD or lognormal:MEAN,SD (tokens); replaces --output-tokens")
	fs.StringVar(&s.Lengths, "lengths", s.Lengths, "draw (input, output) length pairs: mix:INxOUT@WEIGHT,… (e.g. mix:512x128@0.7,2048x256@0.3) or file:PATH (a CSV of input_tokens,output_tokens rows, each drawn with equal chance)")
}
