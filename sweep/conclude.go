package sweep

import (
	"servebench/metrics"
	"servebench/record"
)

// kneeShare defines the saturation knee: the lightest load whose request throughput reaches
// this share of the sweep's peak. Past it, more load buys little throughput and only adds
// latency (queueing); a fixed share is robust to the noise that defeats a slope test on a few
// points.
const kneeShare = 0.9

// conclude is the sweep's sweep-end line: its points by load and what they show (the knee,
// and with SLOs the point of maximum goodput and the highest load meeting them).
func (sw *sweeper) conclude(interrupted bool) *record.SweepEnd {
	e := &record.SweepEnd{Repeat: max(1, sw.spec.Repeat), KneeShare: kneeShare, Interrupted: interrupted}
	for _, p := range sw.byLoad() {
		e.Points = append(e.Points, sweepPoint(p))
	}
	findKnee(e)
	if slo := sw.b.Options().SLO; slo.Any() {
		e.SLO = slo.String()
		e.TargetAttainment, _ = metrics.ParseShare("--target-attainment", sw.c.Target)
		findMaxGoodput(e)
		findSLOLoad(e)
	}
	return e
}

// sweepPoint is a point as the sweep-end line keeps it: medians over its runs, and its
// lowest attainment (a point meets the SLOs when every run did).
func sweepPoint(p *pointRun) record.SweepPoint {
	return record.SweepPoint{Label: p.ps.Label, Runs: p.ps.RunIndexes(), Concurrency: p.pt.users, Rate: p.pt.rate,
		Offered: offered(p), RequestThroughput: p.ps.Median(throughput),
		RequestGoodput: p.ps.Median(func(s *metrics.Summary) *float64 { return s.RequestGoodput }),
		SLOAttainment:  p.ps.Attainment(), Poor: p.ps.Poor()}
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
