package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"servebench/metrics"
	"servebench/record"
	"servebench/stat"
)

// --repeat auto: run again until the run-to-run 95% interval of every key metric is within
// the target half-width (--repeat-width, 5% by default) of its value, or --repeat-max runs
// (10). At least minAutoRuns runs are made: with two, t has one degree of freedom and two
// runs that agree by chance would stop it. The last run-end line records why it stopped and
// the widths reached (record.RepeatAuto), so a baseline shows it was measured enough.
const (
	minAutoRuns     = 3
	defaultAutoMax  = 10
	defaultAutoWide = 0.05
)

// autoKeys are the key metrics whose run-to-run interval --repeat auto narrows.
var autoKeys = []struct {
	name string
	get  func(*metrics.Summary) (float64, bool)
}{
	{"TTFT p50", func(s *metrics.Summary) (float64, bool) { return s.TTFT.Median, s.TTFT.Valid() }},
	{"ITL p50", func(s *metrics.Summary) (float64, bool) { return s.ITLChunk.Median, s.ITLChunk.Valid() }},
	{"TPOT p50", func(s *metrics.Summary) (float64, bool) { return s.TPOT.Median, s.TPOT.Valid() }},
	{"output throughput", func(s *metrics.Summary) (float64, bool) {
		if s.OutputThroughput == nil {
			return 0, false
		}
		return *s.OutputThroughput, true
	}},
}

func (b *Session) autoRepeat(ctx, hard context.Context) error {
	maxRuns, target := b.spec.RepeatMax, b.spec.RepeatWidth
	if maxRuns == 0 {
		maxRuns = defaultAutoMax
	}
	if target == 0 {
		target = defaultAutoWide
	}
	var sums []*metrics.Summary
	for i := range maxRuns {
		label := fmt.Sprintf("repeat %d (auto, at most %d)", i+1, maxRuns)
		// whether this run is the last is known only from its own summary, before its run-end
		// line is written: RunPoint asks the hook
		var stop *record.RepeatAuto
		b.endHook = func(s *metrics.Summary) *record.RepeatAuto {
			if ra := AutoWidths(append(append([]*metrics.Summary{}, sums...), s), target, maxRuns); ra.Stop != "" {
				stop = ra
			}
			return stop
		}
		s, err := b.RunPoint(ctx, hard, b.lc, record.RunEnd{Run: i, Label: label}, label)
		b.endHook = nil
		if errors.Is(err, ErrNotBegun) {
			return nil // stopped between runs: the runs before stand
		}
		b.logf("%s: %s", label, RunLine(s))
		if err != nil || ctx.Err() != nil {
			return err
		}
		sums = append(sums, s)
		if stop != nil {
			b.logf("--repeat auto: %s after %d runs (%s)", stop.Stop, len(sums), WidthLine(stop))
			return nil
		}
	}
	return nil
}

// AutoWidths judges runs for --repeat auto: each key metric's run-to-run 95% half-width
// (stat.RelHalfWidth); Stop is "converged" when every defined one is within target after at
// least minAutoRuns runs, "cap" at maxRuns runs, else "" (run again).
func AutoWidths(runs []*metrics.Summary, target float64, maxRuns int) *record.RepeatAuto {
	ra := &record.RepeatAuto{Runs: len(runs), Max: maxRuns, Target: target, Widths: map[string]*float64{}}
	ok, any := true, false
	for _, k := range autoKeys {
		var vals []float64
		for _, s := range runs {
			if v, defined := k.get(s); defined && v > 0 {
				vals = append(vals, v)
			}
		}
		w := stat.RelHalfWidth(vals, 0.05)
		if len(vals) < len(runs) || math.IsInf(w, 0) {
			ra.Widths[k.name] = nil
			if len(vals) > 0 {
				ok = false // defined in some runs only: not pinned down
			}
			continue
		}
		any = true
		ra.Widths[k.name] = &w
		ok = ok && w <= target
	}
	switch {
	case len(runs) >= minAutoRuns && ok && any:
		ra.Stop = "converged"
	case len(runs) >= maxRuns:
		ra.Stop = "cap"
	}
	return ra
}

// WidthLine lists the widths: "TTFT p50 ±1.2%, ITL p50 ±0.4%, ...".
func WidthLine(ra *record.RepeatAuto) string {
	var parts []string
	for _, k := range autoKeys {
		if w := ra.Widths[k.name]; w != nil {
			parts = append(parts, fmt.Sprintf("%s ±%.1f%%", k.name, 100**w))
		}
	}
	return strings.Join(parts, ", ") + fmt.Sprintf("; target ±%.1f%%", 100*ra.Target)
}
