package cli

import (
	"github.com/spf13/pflag"

	"servebench/runspec"
)

// bindStageFlags registers --stages.
func bindStageFlags(fs *pflag.FlagSet, s *runspec.Spec) {
	fs.StringVar(&s.Stages, "stages", s.Stages, "load stages one after the other in one run, each with its own figures: USERSxDURATION,… (closed loop: 8x60s,32x60s,64x60s) or RATErpsxDURATION,… (open loop: 2rpsx30s,8rpsx30s); replaces --concurrency, --rate and --duration")
}
