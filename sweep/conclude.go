package sweep

import (
	"fmt"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// kneeShare defines the saturation knee: the lightest load whose request throughput reaches
// this share of the sweep's peak. Past it, more load buys little throughput and only adds
// latency (queueing); a fixed share is robust to the noise that defeats a slope test on a few
// points.
const kneeShare = 0.9

// orderShare: an --auto sweep whose maximum-throughput point completed less than this share
// of its synchronous point's request throughput cannot be ordered by load. Every request in
// flight at once can never serve fewer requests per second than one at a time on the same
// server; a server of one slot serves about as many, so a margin keeps its noise from
// calling it INVALID (docs/sweeps.md).
const orderShare = 0.9

// conclude is the sweep's sweep-end line: its points by load and what they show (the knee,
// and with SLOs the point of maximum goodput and the highest load meeting them).
func (sw *sweeper) conclude(interrupted bool) *record.SweepEnd {
	return sw.concludeSLO(interrupted, sw.b.Options().SLO)
}

// concludeSLO is conclude under the objectives slo.
func (sw *sweeper) concludeSLO(interrupted bool, slo metrics.SLO) *record.SweepEnd {
	e := &record.SweepEnd{Repeat: max(1, sw.spec.Repeat), KneeShare: kneeShare, Interrupted: interrupted}
	for _, p := range sw.byLoad() {
		e.Points = append(e.Points, sweepPoint(p))
	}
	if slo.Any() {
		e.SLO = slo.String()
		e.TargetAttainment, _ = metrics.ParseShare("--target-attainment", sw.c.Target)
	}
	e.Unordered = unordered(sw.pts)
	if withhold(e) {
		return e
	}
	findKnee(e)
	if slo.Any() {
		findMaxGoodput(e)
		findSLOLoad(e)
	}
	return e
}

// sweepPoint is a point as the sweep-end line keeps it: medians over its runs, and its
// lowest attainment (a point meets the SLOs when every run did).
func sweepPoint(p *pointRun) record.SweepPoint {
	return record.SweepPoint{Label: p.ps.Label, Runs: p.ps.RunIndexes(), Concurrency: p.pt.users, Rate: p.pt.rate,
		Offered: offered(p), RequestThroughput: p.ps.Median(throughput), ServerThroughput: p.ps.Median(serverThroughput),
		RequestGoodput: p.ps.Median(func(s *metrics.Summary) *float64 { return s.RequestGoodput }),
		SLOAttainment:  p.ps.Attainment(), Invalid: invalidReason(p.ps.Runs), Poor: p.ps.Poor()}
}

// serverThroughput is a run's completion rate by the server's own counter (its output
// tokens per second inside the window, metrics.Server.GenerationRate, over the run's output
// tokens per completed request); nil where it has none.
func serverThroughput(s *metrics.Summary) *float64 {
	if s.Server == nil || s.Server.GenerationRate == nil || s.OutputTokens <= 0 || s.Completed == 0 {
		return nil
	}
	v := *s.Server.GenerationRate * float64(s.Completed) / float64(s.OutputTokens)
	return &v
}

// invalidReason is why the warnings of one of runs invalidate it ("" when none do).
func invalidReason(runs []metrics.RunSummary) string {
	for _, r := range runs {
		if bad := r.Summary.Invalid(); len(bad) > 0 {
			return bad[0].Reason()
		}
	}
	return ""
}

// withhold sets Withheld when a point is invalid: the knee and peak are relative to every
// point's throughput, and max goodput and the SLO load compare points, so one point whose
// figures are not the server's (its prompts served from the cache, nothing measured) can
// move any of them. They are not computed, rather than printed as if they held.
func withhold(e *record.SweepEnd) bool {
	var bad []string
	for _, p := range e.Points {
		if p.Invalid != "" {
			bad = append(bad, fmt.Sprintf("%s (%s)", p.Label, p.Invalid))
		}
	}
	var why []string
	if e.Unordered != "" {
		why = append(why, e.Unordered)
	}
	if len(bad) > 0 {
		what := "point"
		if len(bad) > 1 {
			what = "points"
		}
		why = append(why, fmt.Sprintf("%d of %d %s INVALID: %s", len(bad), len(e.Points), what, strings.Join(bad, "; ")))
	}
	e.Withheld = strings.Join(why, "; and ")
	return e.Withheld != ""
}

// unordered is why an --auto sweep's points cannot be ordered by load ("" when they can):
// its maximum-throughput point completed less than orderShare of the synchronous point's
// requests per second. Its rates between would lie below the synchronous one and its knee
// would be the synchronous point: a sweep that measured the machine's or the server's change
// between its points, not their loads. A point whose window did not hold its load (Poor) or
// that completed nothing is not judged.
func unordered(pts []*pointRun) string {
	var sync, peak *pointRun
	for _, p := range pts {
		switch p.pt.kind {
		case "synchronous":
			sync = p
		case "throughput":
			peak = p
		}
	}
	if sync == nil || peak == nil || sync.ps.Poor() != "" || peak.ps.Poor() != "" {
		return ""
	}
	lo, hi := deref(sync.ps.Median(throughput)), deref(peak.ps.Median(throughput))
	if lo <= 0 || hi <= 0 || hi >= orderShare*lo {
		return ""
	}
	return fmt.Sprintf("the points cannot be ordered by load: the maximum-throughput point (%d users) completed %.3g req/s, %.0f%% below the synchronous point's %.3g req/s; every request in flight at once cannot serve fewer requests per second than one at a time on one server, so the machine or the server changed between the points (another load, throttling)",
		peak.pt.users, hi, 100*(1-hi/lo), lo)
}

// findKnee sets the peak throughput and the knee: the lightest point reaching kneeShare of it.
func findKnee(e *record.SweepEnd) {
	peak := 0.0
	for _, p := range e.Points {
		if p.Poor == "" {
			peak = max(peak, deref(p.RequestThroughput))
		}
	}
	if peak <= 0 {
		return
	}
	e.PeakThroughput = &peak
	for i, p := range e.Points {
		if p.Poor == "" && deref(p.RequestThroughput) >= kneeShare*peak {
			e.Knee = &e.Points[i]
			return
		}
	}
}

// findMaxGoodput sets the point of the highest goodput (the lightest of equals).
func findMaxGoodput(e *record.SweepEnd) {
	for i, p := range e.Points {
		if g := p.RequestGoodput; p.Poor == "" && g != nil && (e.MaxGoodput == nil || *g > *e.MaxGoodput.RequestGoodput) {
			e.MaxGoodput = &e.Points[i]
		}
	}
}

// findSLOLoad walks the points up in load: the SLO load is the last point before the first
// that missed the target; points that met above that miss show that attainment was not
// monotonic in load, and are named, never taken as the answer.
func findSLOLoad(e *record.SweepEnd) {
	for i, p := range e.Points {
		if p.Poor != "" {
			continue
		}
		met := p.SLOAttainment != nil && *p.SLOAttainment >= e.TargetAttainment
		switch {
		case met && e.FirstMiss == nil:
			e.SLOLoad = &e.Points[i]
		case met:
			e.MetAbove = append(e.MetAbove, p)
		case e.FirstMiss == nil:
			e.FirstMiss = &e.Points[i]
		}
	}
}
