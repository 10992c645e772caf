package bench

import (
	"fmt"
	"strings"
	"time"

	"servebench/load"
	"servebench/load/pacer"
	"servebench/runspec"
)

// stagesConfig sets the load stages of --stages: users stages run the closed loop with the
// most users any stage has (load waits the surplus per stage), rate stages an open loop on
// their schedule (pacer.Steps, arrivals of the --arrival shape).
func stagesConfig(s *runspec.Spec, lc *load.Config) error {
	lc.Stages = s.StageList()
	if lc.Stages[0].Users > 0 {
		return nil
	}
	unit, err := pacer.New(s.Arrival, 1, s.Burstiness, s.Seed)
	if err != nil {
		return runspec.Usage(err)
	}
	st := pacer.Steps{Unit: unit}
	for _, g := range lc.Stages {
		st.Rates = append(st.Rates, g.Rate)
		st.Durs = append(st.Durs, time.Duration(g.Duration))
	}
	lc.Pacer = st
	return nil
}

// describeStages is a staged load in words: "stages 8 users 2s, 32 users 2s (closed loop)".
func describeStages(s *runspec.Spec) string {
	var parts []string
	sts := s.StageList()
	for _, st := range sts {
		parts = append(parts, st.String())
	}
	kind := "closed loop"
	if sts[0].Rate > 0 {
		kind = s.Arrival + " arrivals"
	}
	return fmt.Sprintf("%d stages %s (%s), %v in all after %d warmup", len(sts), strings.Join(parts, ", "), kind, s.Duration, s.Warmup)
}
