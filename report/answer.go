package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// The answer in one sentence: what a sweep says to someone who reads nothing else. It opens
// every sweep's report (text and HTML) and the report of a sweep over server configurations,
// and its figures are the per-point table's cells below it, formatted the same way.

// answerOf is the sentence for the sweep whose conclusions are e and whose points are pts;
// subject names what served ("this server", "configuration np4").
func answerOf(subject string, e *record.SweepEnd, pts []metrics.PointSummary) string {
	switch {
	case e == nil:
		return "no answer: the sweep did not finish (no sweep-end line), so no load is named"
	case e.Withheld != "":
		return "no answer: the sweep is INVALID (" + e.Withheld + "), so no load is named; fix what the notes say and sweep again"
	case e.SLO != "" && e.SLOLoad != nil:
		p := pointNamed(pts, e.SLOLoad.Label)
		return fmt.Sprintf("%s serves %s (%s) within %s for %s of requests; %s; %s", subject, loadWords(e.SLOLoad),
			throughputWords(p), e.SLO, pctWords(e.TargetAttainment), limitWords(e, pts), sureWords(e, pts))
	case e.SLO != "" && e.FirstMiss != nil:
		return fmt.Sprintf("%s serves no tested load within %s for %s of requests: the lightest, %s, reached %s; %s", subject,
			e.SLO, pctWords(e.TargetAttainment), loadWords(e.FirstMiss), attainmentOf(e.FirstMiss, pts), sureWords(e, pts))
	case e.Knee != nil:
		p := pointNamed(pts, e.Knee.Label)
		return fmt.Sprintf("%s saturates at %s (%s), %.0f%% of its peak %.2f req/s; no --slo given, so no load within objectives is named; %s",
			subject, loadWords(e.Knee), throughputWords(p), 100*deref(e.Knee.RequestThroughput) / *e.PeakThroughput, *e.PeakThroughput, sureWords(e, pts))
	}
	return "no answer: no point completed a request"
}

// pointNamed is the point of pts labelled label (nil when none is).
func pointNamed(pts []metrics.PointSummary, label string) *metrics.PointSummary {
	for i := range pts {
		if pts[i].Label == label {
			return &pts[i]
		}
	}
	return nil
}

// loadWords is a point's load as a newcomer says it.
func loadWords(p *record.SweepPoint) string {
	if p.Concurrency > 0 {
		return fmt.Sprintf("%d %s at once", p.Concurrency, map[bool]string{true: "user", false: "users"}[p.Concurrency == 1])
	}
	return fmt.Sprintf("%.3g requests per second", p.Rate)
}

// throughputWords are a point's throughputs as the table shows them.
func throughputWords(p *metrics.PointSummary) string {
	if p == nil {
		return "figures not in this file"
	}
	return fmt.Sprintf("%s req/s, %s output tok/s", optf(p.Median(reqTput), 2), optf(p.Median(outTput), 0))
}

// attainmentOf is a point's SLO attainment as its row in the table shows it (the lowest of
// its runs), or as the sweep-end line recorded it where the file holds no such row.
func attainmentOf(sp *record.SweepPoint, pts []metrics.PointSummary) string {
	if p := pointNamed(pts, sp.Label); p != nil {
		return pct1(p.Attainment())
	}
	return pct1(sp.SLOAttainment)
}

func pctWords(share float64) string { return fmt.Sprintf("%.4g%%", 100*share) }

// limitWords say what stops the next heavier load: the server's own figures at the first
// point that missed (requests waiting, a full KV cache) where it reported them, else which
// objective it missed.
func limitWords(e *record.SweepEnd, pts []metrics.PointSummary) string {
	if e.FirstMiss == nil {
		return "every tested load met them, so the limit lies beyond the heaviest"
	}
	miss := fmt.Sprintf("the next load, %s, reached %s", loadWords(e.FirstMiss), attainmentOf(e.FirstMiss, pts))
	p := pointNamed(pts, e.FirstMiss.Label)
	if p == nil || len(p.Runs) == 0 || p.Runs[0].Summary.Server == nil {
		return miss + " (no server figures to say why: --scrape the server's /metrics)"
	}
	sv := p.Runs[0].Summary.Server
	var why []string
	if sv.KVUsage != nil && sv.KVUsage.Max >= 0.9 {
		why = append(why, fmt.Sprintf("KV cache %.0f%% full", 100*sv.KVUsage.Max))
	}
	if sv.Waiting != nil && sv.Waiting.Mean >= 0.5 {
		why = append(why, fmt.Sprintf("queueing, %.1f requests waiting on average", sv.Waiting.Mean))
	}
	if sv.Preemptions != nil && *sv.Preemptions > 0 {
		why = append(why, fmt.Sprintf("%.0f preemptions", *sv.Preemptions))
	}
	if len(why) == 0 {
		return miss + ", limited by compute (the server queued nothing and its KV cache had room)"
	}
	return miss + ", limited by " + strings.Join(why, " and ") + " (the server's figures)"
}

// sureWords say how sure the answer is: repeats and their spread, and whether attainment
// was monotonic in load.
func sureWords(e *record.SweepEnd, pts []metrics.PointSummary) string {
	if len(e.MetAbove) > 0 {
		return "not sure: a heavier load met the objectives after a lighter one missed (noise, a cache, or a server that changed)"
	}
	if e.Repeat <= 1 {
		return "one run per point, so how sure is not measured (--repeat 3 measures it)"
	}
	worst := 0.0
	for i := range pts {
		if s := pts[i].Spread(reqTput); s != nil && *s > worst {
			worst = *s
		}
	}
	return fmt.Sprintf("%d runs per point, req/s within %.1f%% of each other at every point", e.Repeat, 100*worst)
}
