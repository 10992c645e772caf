package sweep

import (
	"cmp"
	"fmt"
	"slices"

	"servebench/metrics"
	"servebench/runspec"
)

// auto runs GuideLLM's "sweep" profile: synchronous (1 user) for the unloaded latency, then
// maximum throughput (every request at once, or --max-concurrency users), then --points
// rates evenly between the two throughputs. With SLOs it then bisects between the highest
// rate whose every lighter point met the attainment target and the lightest that did not.
func (sw *sweeper) auto() error {
	total := 2 + sw.c.Points
	step := func(i int, p point) (*pointRun, error) {
		return sw.run(p, fmt.Sprintf("point %d/%d %s", i, total, p.label()))
	}
	sync, err := step(1, point{users: 1, kind: "synchronous"})
	if err != nil {
		return err
	}
	peak, err := step(2, point{users: peakUsers(sw.spec, sw.base.Requests), kind: "throughput"})
	if err != nil {
		return err
	}
	for _, p := range []*pointRun{sync, peak} {
		if why := p.ps.Poor(); why != "" {
			sw.logf("%s %s: no rates between", p.pt.label(), why)
			return nil
		}
	}
	lo, hi := offered(sync), offered(peak)
	if !(hi > lo) || lo <= 0 {
		sw.logf("maximum throughput %.3g req/s is not above synchronous %.3g req/s: no rates between", hi, lo)
		return nil
	}
	for i := 1; i <= sw.c.Points; i++ {
		r := lo + (hi-lo)*float64(i)/float64(sw.c.Points+1)
		if _, err := step(2+i, point{rate: r}); err != nil {
			return err
		}
	}
	if !sw.b.Options().SLO.Any() {
		return nil
	}
	return sw.search()
}

// peakUsers is the maximum-throughput point's users: --max-concurrency, or every measured
// request in flight at once.
func peakUsers(s runspec.Spec, requests int) int {
	if s.MaxConcurrency > 0 {
		return s.MaxConcurrency
	}
	return max(requests, 1)
}

// search bisects on rate for the highest load whose SLO attainment stays at or above the
// target, between the bracket the points so far give.
func (sw *sweeper) search() error {
	target, _ := metrics.ParseShare("--target-attainment", sw.c.Target)
	pass, fail, ok := sw.bracket(target)
	if !ok {
		return nil // the lightest load missed, or every load met: nothing to search between
	}
	for i := 1; i <= sw.c.Steps; i++ {
		mid := (pass + fail) / 2
		p := point{rate: mid, kind: "search"}
		pr, err := sw.run(p, fmt.Sprintf("search %d/%d %s", i, sw.c.Steps, p.label()))
		if err != nil {
			return err
		}
		if meets(pr, target) {
			pass = mid
		} else {
			fail = mid
		}
	}
	return nil
}

// bracket returns the offered rate of the highest load whose every lighter point met the
// target, and of the lightest point that missed it (above which a point that met is noise or
// luck, not a load the server serves). Closed-loop points stand at their achieved throughput.
func (sw *sweeper) bracket(target float64) (pass, fail float64, ok bool) {
	for _, p := range sw.byLoad() {
		if p.ps.Poor() != "" {
			continue // its window did not hold its load: it says nothing of the SLOs there
		}
		if !meets(p, target) {
			return pass, offered(p), pass > 0 && offered(p) > pass
		}
		pass = offered(p)
	}
	return pass, 0, false // every load met
}

// meets reports whether every run of a point met the attainment target.
func meets(p *pointRun, target float64) bool {
	a := p.ps.Attainment()
	return a != nil && *a >= target
}

// offered is a point's load as a rate: its arrival rate, or for a closed loop its achieved
// throughput (the rate that many users offered; the median over its runs).
func offered(p *pointRun) float64 {
	if p.pt.rate > 0 {
		return p.pt.rate
	}
	return deref(p.ps.Median(throughput))
}

func throughput(s *metrics.Summary) *float64 { return s.RequestThroughput }

// byLoad returns the points ordered by load: --auto's by offered rate with the maximum-
// throughput point last, a list's by its users or rate.
func (sw *sweeper) byLoad() []*pointRun {
	pts := slices.Clone(sw.pts)
	key := func(p *pointRun) float64 {
		if !sw.c.Auto && p.pt.users > 0 {
			return float64(p.pt.users)
		}
		return offered(p)
	}
	slices.SortStableFunc(pts, func(a, b *pointRun) int {
		if ta, tb := a.pt.kind == "throughput", b.pt.kind == "throughput"; ta != tb {
			return map[bool]int{true: 1, false: -1}[ta]
		}
		return cmp.Compare(key(a), key(b))
	})
	return pts
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
