package runspec

import (
	"os"
	"strings"

	"github.com/spf13/pflag"

	"servebench/workload"
)

// Length distributions (--input-dist, --output-dist, --lengths) replace the fixed
// --input-tokens/--output-tokens ± --range-ratio of a synthetic workload; see
// workload.Lengths. They apply to synthetic prompts only: a dataset, a trace, a prompts file,
// sessions and shared prefixes bring lengths of their own.

// LengthDists parses the length distributions: nil when none is asked. A --lengths file is
// returned as its path (file), read when the workload is built.
func (s *Spec) LengthDists() (l *workload.Lengths, file string, err error) {
	if s.InputDist == "" && s.OutputDist == "" && s.Lengths == "" {
		return nil, "", nil
	}
	l = &workload.Lengths{}
	if s.InputDist != "" {
		d, err := workload.ParseDist("--input-dist", s.InputDist)
		if err != nil {
			return nil, "", Usage(err)
		}
		l.In = &d
	}
	if s.OutputDist != "" {
		d, err := workload.ParseDist("--output-dist", s.OutputDist)
		if err != nil {
			return nil, "", Usage(err)
		}
		l.Out = &d
	}
	switch kind, _, _ := strings.Cut(s.Lengths, ":"); kind {
	case "":
	case "mix":
		if l.Pairs, err = workload.ParseMix(s.Lengths); err != nil {
			return nil, "", Usage(err)
		}
	case "file":
		file = strings.TrimPrefix(s.Lengths, "file:")
	default:
		return nil, "", Usagef("--lengths %q: want mix:INxOUT@WEIGHT,… or file:PATH (a CSV of input_tokens,output_tokens)", s.Lengths)
	}
	return l, file, nil
}

// validateLengths checks the length distributions and what they combine with.
func (s *Spec) validateLengths() error {
	_, file, err := s.LengthDists()
	switch {
	case err != nil:
		return err
	case s.InputDist == "" && s.OutputDist == "" && s.Lengths == "":
		return nil
	case s.Lengths != "" && (s.InputDist != "" || s.OutputDist != ""):
		return Usagef("--lengths draws input and output lengths together: leave out --input-dist and --output-dist")
	case s.RangeRatio != 0 && (s.Lengths != "" || s.InputDist != "" && s.OutputDist != ""):
		return Usagef("--range-ratio varies the fixed lengths: leave it out with a length distribution")
	case s.Dataset != "" || s.Prompts != "" || s.Trace != "" || s.PrefixGroups > 0 || s.Turns > 1:
		return Usagef("--input-dist, --output-dist and --lengths shape synthetic prompts: leave out --dataset, --prompts, --trace, --prefix-groups and --turns")
	}
	if s.Lengths != "" && strings.HasPrefix(s.Lengths, "file:") {
		if file == "" {
			return Usagef("--lengths %q: want file:PATH", s.Lengths)
		}
		if _, err := os.Stat(file); err != nil {
			return Usagef("--lengths: %v", err)
		}
	}
	return nil
}

// bindLengthFlags registers the length distributions of a synthetic workload.
func bindLengthFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.InputDist, "input-dist", s.InputDist, "draw each prompt's length from normal:MEAN,SD or lognormal:MEAN,SD (tokens; clamped to [1, 2^24]); replaces --input-tokens")
	fs.StringVar(&s.OutputDist, "output-dist", s.OutputDist, "draw each output length from normal:MEAN,SD or lognormal:MEAN,SD (tokens); replaces --output-tokens")
	fs.StringVar(&s.Lengths, "lengths", s.Lengths, "draw (input, output) length pairs: mix:INxOUT@WEIGHT,… (e.g. mix:512x128@0.7,2048x256@0.3) or file:PATH (a CSV of input_tokens,output_tokens rows, each drawn with equal chance)")
}
