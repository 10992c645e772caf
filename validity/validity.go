// Package validity holds a run to rules in the manner of MLPerf Inference's LoadGen, which
// counts a Server-scenario result only when the run lasted a minimum duration (judged on the
// scheduled time of its last query, so a slow server cannot stretch it), measured a minimum
// number of queries, and passes early stopping for each latency constraint (stat.EarlyStopMin:
// with t queries over the limit, at least n = h + t queries, confidence 0.99). The verdict is
// VALID or INVALID, with each rule's figure and the shortfall.
//
// Where LoadGen has no rule we say ours: a failed request counts as over every latency limit
// (it met none); a cancelled one (our stop, not the server's) is not counted; a request with
// one output token has no TPOT and is not over a TPOT limit (as for goodput).
package validity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"servebench/metrics"
	"servebench/record"
	"servebench/stat"
)

// Limit is one latency constraint: the Percentile-th percentile of Metric at most Max.
type Limit struct {
	Metric     string // "ttft", "tpot", "e2e" or "ttfo"
	Percentile float64
	Max        time.Duration
}

// Rules is what a run is held to. The zero value holds it to nothing.
type Rules struct {
	Name        string // preset name, or "custom"
	MinDuration time.Duration
	MinRequests int
	Limits      []Limit
}

// Any reports whether a rule is set.
func (r Rules) Any() bool { return r.MinDuration > 0 || r.MinRequests > 0 || len(r.Limits) > 0 }

// MLPerfServerDuration is MLPerf's minimum duration of a Server-scenario run.
const MLPerfServerDuration = 600 * time.Second

// Preset is a named rule set.
type Preset struct {
	Name, Desc string
	Rules      Rules
}

// Presets carry MLPerf Inference's published latency constraints for its LLM benchmarks
// (p99 TTFT and p99 TPOT, Server and Interactive scenarios) and its Server minimum duration.
// MLPerf's minimum query counts vary by round and benchmark and are not carried: give
// --valid-min-requests.
var Presets = []Preset{
	mlperf("mlperf-llama3.1-8b-server", "Llama-3.1-8B server: p99 TTFT ≤ 2 s, p99 TPOT ≤ 100 ms", 2000, 100),
	mlperf("mlperf-llama3.1-8b-interactive", "Llama-3.1-8B interactive: p99 TTFT ≤ 500 ms, p99 TPOT ≤ 30 ms", 500, 30),
	mlperf("mlperf-llama2-70b-server", "Llama-2-70B server: p99 TTFT ≤ 2 s, p99 TPOT ≤ 200 ms", 2000, 200),
	mlperf("mlperf-deepseek-r1-server", "DeepSeek-R1 server: p99 TTFT ≤ 2 s, p99 TPOT ≤ 80 ms", 2000, 80),
}

func mlperf(name, desc string, ttftMS, tpotMS int) Preset {
	return Preset{Name: name, Desc: desc + ", 600 s", Rules: Rules{Name: name, MinDuration: MLPerfServerDuration,
		Limits: []Limit{{"ttft", 99, time.Duration(ttftMS) * time.Millisecond}, {"tpot", 99, time.Duration(tpotMS) * time.Millisecond}}}}
}

// PresetNames lists the presets' names.
func PresetNames() []string {
	var out []string
	for _, p := range Presets {
		out = append(out, p.Name)
	}
	return out
}

// Build makes the rules of a run: the preset named (none when ""), then the minimums given
// (they override the preset's when positive), then every --slo value written at a
// percentile (NAME=DURATION@pNN).
func Build(preset string, minDuration time.Duration, minRequests int, slos []string) (Rules, error) {
	var r Rules
	if preset != "" {
		i := slices.IndexFunc(Presets, func(p Preset) bool { return p.Name == preset })
		if i < 0 {
			return r, fmt.Errorf("--valid %q: unknown preset (want one of %s)", preset, strings.Join(PresetNames(), ", "))
		}
		r = Presets[i].Rules
		r.Limits = slices.Clone(r.Limits)
	}
	if minDuration > 0 {
		r.MinDuration = minDuration
	}
	if minRequests > 0 {
		r.MinRequests = minRequests
	}
	ls, err := ParseLimits(slos)
	if err != nil {
		return r, err
	}
	if len(ls) > 0 || (preset == "" && r.Any()) {
		if r.Name == "" {
			r.Name = "custom"
		} else if len(ls) > 0 {
			r.Name += " + --slo"
		}
	}
	r.Limits = append(r.Limits, ls...)
	return r, nil
}

// ParseLimits reads the --slo values written at a percentile, "ttft=2s@p99" (others are
// goodput objectives only and are skipped). The metric is ttft, tpot, e2e or ttfo; the percentile
// is in (0, 100).
func ParseLimits(vals []string) ([]Limit, error) {
	var out []Limit
	for _, v := range vals {
		for _, kv := range strings.Split(v, ",") {
			k, rest, _ := strings.Cut(strings.TrimSpace(kv), "=")
			d, at, ok := strings.Cut(rest, "@")
			if !ok {
				continue
			}
			dur, err := time.ParseDuration(strings.TrimSpace(d))
			p, perr := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(at), "p"), 64)
			name := strings.ToLower(strings.TrimSpace(k))
			if name == "e2el" {
				name = "e2e"
			}
			if name == "ttfat" {
				name = "ttfo"
			}
			if err != nil || dur <= 0 || perr != nil || !(p > 0 && p < 100) || !slices.Contains([]string{"ttft", "tpot", "e2e", "ttfo"}, name) {
				return nil, fmt.Errorf("--slo %q: want NAME=DURATION@pNN with NAME ttft, tpot, e2e or ttfo and a percentile in (0, 100), e.g. ttft=2s@p99", kv)
			}
			out = append(out, Limit{Metric: name, Percentile: p, Max: dur})
		}
	}
	return out, nil
}

// Checker applies Rules to a run's records: Add each record, then Result. The zero value
// with no rules gives a nil Result.
type Checker struct {
	Rules                 Rules
	n                     int
	firstSched, lastSched int64
	over                  []int
	vals                  [][]float64 // per limit, the figure of every request that has one (ns)
}

// Add counts one record (warmup, cooldown and cancelled records are not counted). A nil
// Checker counts nothing.
func (c *Checker) Add(r *record.Record) {
	if c == nil || !c.Rules.Any() || !r.Measured() || r.ErrorClass == record.ErrCancelled {
		return
	}
	if c.over == nil {
		c.over, c.vals = make([]int, len(c.Rules.Limits)), make([][]float64, len(c.Rules.Limits))
	}
	if c.n == 0 || r.Scheduled < c.firstSched {
		c.firstSched = r.Scheduled
	}
	c.lastSched = max(c.lastSched, r.Scheduled)
	c.n++
	m := metrics.PerRequest(r)
	for i, l := range c.Rules.Limits {
		if !r.OK() {
			c.over[i]++ // a failure met no limit
			continue
		}
		v := figure(m, l.Metric)
		if !v.OK {
			if l.Metric != "tpot" {
				c.over[i]++ // no first token: no TTFT or E2E within any limit
			}
			continue
		}
		c.vals[i] = append(c.vals[i], v.V)
		if v.V > float64(l.Max) {
			c.over[i]++
		}
	}
}

func figure(m metrics.RequestMetrics, name string) metrics.Opt {
	switch name {
	case "ttft":
		return m.TTFT
	case "tpot":
		return m.TPOT
	case "ttfo":
		return m.TTFO
	}
	return m.E2E
}

// Result is the verdict, nil when no rule was given.
func (c *Checker) Result() *record.Validity {
	if c == nil || !c.Rules.Any() {
		return nil
	}
	v := &record.Validity{Rules: c.Rules.Name, Verdict: record.Valid}
	if d := c.Rules.MinDuration; d > 0 {
		v.Checks = append(v.Checks, c.duration(d))
	}
	if n := c.Rules.MinRequests; n > 0 {
		ch := record.ValidityCheck{Rule: fmt.Sprintf("min requests %d", n), Pass: c.n >= n, Figure: fmt.Sprintf("%d measured", c.n)}
		if !ch.Pass {
			ch.Shortfall = fmt.Sprintf("needs %d more requests", n-c.n)
		}
		v.Checks = append(v.Checks, ch)
	}
	for i, l := range c.Rules.Limits {
		var over int
		var vals []float64
		if c.over != nil {
			over, vals = c.over[i], c.vals[i]
		}
		v.Checks = append(v.Checks, EarlyStop(l, c.n, over, vals))
	}
	for _, ch := range v.Checks {
		if !ch.Pass {
			v.Verdict = record.Invalid
		}
	}
	return v
}

// duration judges the run's length on the scheduled time of its last measured request, from
// the first measured one's (LoadGen's rule: a slow server cannot stretch a short schedule).
func (c *Checker) duration(min time.Duration) record.ValidityCheck {
	got := time.Duration(0)
	if c.n > 0 {
		got = time.Duration(c.lastSched - c.firstSched)
	}
	ch := record.ValidityCheck{Rule: fmt.Sprintf("min duration %v", min), Pass: got >= min,
		Figure: fmt.Sprintf("%.1f s to the last scheduled request", got.Seconds())}
	if !ch.Pass {
		ch.Shortfall = fmt.Sprintf("run %.0f s longer (--duration, or more --requests at this rate)", math.Ceil((min - got).Seconds()))
	}
	return ch
}

// EarlyStop is the early-stopping check of one limit: n requests judged, over of them over
// the limit, vals the figures (ns) for the nearest-rank percentile shown beside it.
func EarlyStop(l Limit, n, over int, vals []float64) record.ValidityCheck {
	name := fmt.Sprintf("p%s %s", strconv.FormatFloat(l.Percentile, 'f', -1, 64), strings.ToUpper(l.Metric))
	need := stat.EarlyStopMin(over, l.Percentile/100, 0, stat.EarlyStopConfidence)
	ch := record.ValidityCheck{Rule: fmt.Sprintf("%s ≤ %v (early stopping, confidence %g)", name, l.Max, stat.EarlyStopConfidence),
		Pass: n >= need, Measured: n, Over: over, Needed: need,
		Figure: fmt.Sprintf("%d of %d over the limit", over, n)}
	if p, ok := stat.NearestRank(vals, l.Percentile); ok {
		ch.Figure += fmt.Sprintf("; nearest-rank %s %.4g ms", name, p/1e6)
	}
	switch {
	case ch.Pass:
	case n > 0 && float64(over) > (1-l.Percentile/100)*float64(n):
		ch.Shortfall = fmt.Sprintf("%s is over the limit (%.2g%% of requests over, more than the %.2g%% it allows): reduce the load; more requests would not make it valid",
			name, 100*float64(over)/float64(n), 100-l.Percentile)
	default:
		ch.Shortfall = fmt.Sprintf("%s needs %d more requests at this over-limit count", name, need-n)
	}
	return ch
}

// Invalid lists the runs held INVALID by their run-end lines, e.g. "run 0: p99 TTFT needs 159
// more requests at this over-limit count"; empty when every run held to rules was VALID.
func Invalid(ends []record.RunEnd) []string {
	var out []string
	for _, e := range ends {
		if e.Validity == nil || e.Validity.Verdict != record.Invalid {
			continue
		}
		var why []string
		for _, c := range e.Validity.Checks {
			if !c.Pass {
				why = append(why, c.Shortfall)
			}
		}
		out = append(out, fmt.Sprintf("run %d: %s", e.Run, strings.Join(why, "; ")))
	}
	return out
}

// HighestValid is for a search over loads (sweep --auto with a preset, as LoadGen's
// peak-finding mode): among run-end lines of points at increasing load (Rate, or Concurrency
// for a closed loop), the highest-load point that is VALID with every lower-load point VALID
// too. ok is false when the lightest point is not VALID or no point was held to rules.
func HighestValid(ends []record.RunEnd) (best record.RunEnd, ok bool) {
	load := func(e record.RunEnd) float64 {
		if e.Rate > 0 {
			return e.Rate
		}
		return float64(e.Concurrency)
	}
	sorted := slices.Clone(ends)
	slices.SortStableFunc(sorted, func(a, b record.RunEnd) int {
		switch {
		case load(a) < load(b):
			return -1
		case load(a) > load(b):
			return 1
		}
		return 0
	})
	for _, e := range sorted {
		if e.Validity == nil || e.Validity.Verdict != record.Valid {
			break
		}
		best, ok = e, true
	}
	return best, ok
}
