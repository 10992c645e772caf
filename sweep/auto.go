package sweep

import (
	"fmt"
	"math"
	"slices"

	"servebench/metrics"
)

// auto runs GuideLLM's "sweep" profile: synchronous (1 user) for the unloaded latency, then
// maximum throughput (every request at once, or --max-concurrency users), then --points
// rates evenly between the two throughputs. With SLOs it then bisects between the highest
// rate that met the attainment target and the lowest above it that did not.
func (sw *sweeper) auto() error {
	total := 2 + sw.c.Points
	step := func(i int, p point) (*metrics.Summary, error) {
		return sw.run(p, fmt.Sprintf("point %d/%d %s", i, total, p.label()))
	}
	sync, err := step(1, point{users: 1, kind: "synchronous"})
	if err != nil {
		return err
	}
	users := sw.spec.MaxConcurrency
	if users == 0 {
		users = max(sw.base.Requests, 1) // every measured request in flight at once
	}
	peak, err := step(2, point{users: users, kind: "throughput"})
	if err != nil {
		return err
	}
	lo, hi := deref(sync.RequestThroughput), deref(peak.RequestThroughput)
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

// search bisects on rate for the highest load whose SLO attainment stays at or above the
// target, between the bracket the points so far give.
func (sw *sweeper) search() error {
	target, _ := metrics.ParseShare("--target-attainment", sw.c.Target)
	pass, fail, ok := sw.bracket(target)
	if !ok {
		return nil // no passing load, or every load passed: nothing to search between
	}
	for i := 1; i <= sw.c.Steps; i++ {
		mid := (pass + fail) / 2
		p := point{rate: mid, kind: "search"}
		s, err := sw.run(p, fmt.Sprintf("search %d/%d %s", i, sw.c.Steps, p.label()))
		if err != nil {
			return err
		}
		if meets(s, target) {
			pass = mid
		} else {
			fail = mid
		}
	}
	return nil
}

// bracket returns the offered rate of the highest-load point meeting the target and of the
// lightest heavier point missing it. Closed-loop points stand at their achieved throughput.
func (sw *sweeper) bracket(target float64) (pass, fail float64, ok bool) {
	rows := sw.byLoad()
	fail = math.Inf(1)
	for _, r := range rows {
		x := offered(r)
		if meets(r.sum, target) {
			pass = x
			fail = math.Inf(1)
		} else if math.IsInf(fail, 1) && pass > 0 {
			fail = x
		}
	}
	return pass, fail, pass > 0 && !math.IsInf(fail, 1) && fail > pass
}

// meets reports whether a point's SLO attainment is at or above target.
func meets(s *metrics.Summary, target float64) bool {
	return s.SLOAttainment != nil && *s.SLOAttainment >= target
}

// offered is a point's load as a rate: its arrival rate, or for a closed loop its achieved
// throughput (the rate that many users offered).
func offered(r row) float64 {
	if r.pt.rate > 0 {
		return r.pt.rate
	}
	return deref(r.sum.RequestThroughput)
}

// byLoad returns the rows ordered by offered load (listed sweeps keep their order).
func (sw *sweeper) byLoad() []row {
	rows := slices.Clone(sw.rows)
	if sw.c.Auto {
		slices.SortStableFunc(rows, func(a, b row) int {
			if a.pt.kind == "throughput" || b.pt.kind == "throughput" {
				return map[bool]int{true: 1, false: -1}[a.pt.kind == "throughput"]
			}
			switch x, y := offered(a), offered(b); {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		})
	}
	return rows
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
