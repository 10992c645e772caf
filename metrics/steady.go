package metrics

import (
	"fmt"
	"math"
	"slices"

	"servebench/record"
)

// Steady-state check: was the server steady during the measurement window?
//
// The sending span (first sent → last sent of the measured requests) is cut into k equal
// windows by send time (k = completed/8, between 5 and 20), and for each window the median
// TTFT and median per-request ITL of the requests sent in it, and the output tokens/s of the
// requests that ended in it, form a series. Each series gets
// the Mann–Kendall trend test (Mann 1945, Kendall 1975: S = Σ_{i<j} sign(x_j − x_i), its
// variance n(n−1)(2n+5)/18 less the ties' share, Z = (S ∓ 1)/√Var, two-sided p from the
// normal), which assumes no distribution and is robust to outliers; the size is the change
// between the medians of its first and last thirds (see trend). A series drifts when
// p < steadyAlpha and that change is at least steadyMinChange of the series' median:
// significance alone would flag a 1% trend in a long run, size alone a noisy short one.
// With three series the chance that a steady run is called drifting is at most 3 × α.
const (
	steadyAlpha     = 0.01
	steadyMinChange = 0.10
	steadyMinReqs   = 40 // fewer completed requests: too few windows to test
)

// Drift is one metric's trend over the measurement window.
type Drift struct {
	Metric    string  `json:"metric"`     // "ttft", "itl", "output_throughput", "in_flight", "client_queue"
	Direction string  `json:"direction"`  // "rose" or "fell"
	PerMinute float64 `json:"per_minute"` // the change per minute, in the metric's unit (ms, tok/s, requests)
	Unit      string  `json:"unit"`
	Change    float64 `json:"change"` // last third's median − first third's, over the series' median
	P         float64 `json:"p"`      // Mann–Kendall two-sided p
}

// Steadiness is the verdict of the steady-state check.
type Steadiness struct {
	// Tested is false when the run had too few completed requests for it (Reason says so).
	Tested  bool    `json:"tested"`
	Reason  string  `json:"reason,omitempty"`
	Windows int     `json:"windows"`
	Steady  bool    `json:"steady"`
	Drifts  []Drift `json:"drifts,omitempty"`
	// Queueing is true for an open loop whose requests in flight (or whose client-side queue
	// time) grew through the window: the arrival rate is above the server's capacity and the
	// run measures a growing queue, not the server.
	Queueing bool `json:"unbounded_queueing"`
}

// steadyObs is what the check keeps of one measured request (28 bytes).
type steadyObs struct {
	sent, end int64
	ttft, itl float32 // ns; NaN when undefined
	queue     float32 // dispatched − scheduled, ns
	tokens    int32
}

type steadyAcc struct {
	obs  []steadyObs
	gaps []float64 // scratch for one request's ITL median, reused
}

func (s *steadyAcc) add(r *record.Record, out int) {
	o := steadyObs{sent: r.Sent, end: r.Done, ttft: float32(math.NaN()), itl: float32(math.NaN()), tokens: int32(out)}
	if v, ok := ttft(r); ok {
		o.ttft = float32(v)
	}
	if n := len(r.Events); n >= 2 {
		s.gaps = s.gaps[:0]
		for i := 1; i < n; i++ {
			s.gaps = append(s.gaps, float64(r.Events[i].T-r.Events[i-1].T))
		}
		slices.Sort(s.gaps)
		o.itl = float32(Quantile(s.gaps, 50))
		o.end = r.Events[n-1].T
	}
	if r.Dispatched > 0 {
		o.queue = float32(r.Dispatched - r.Scheduled)
	}
	s.obs = append(s.obs, o)
}

// check tests the series of the window [start, end]; open says the run was an open loop.
func (s *steadyAcc) check(start, end int64, open bool) *Steadiness {
	n := len(s.obs)
	if n < steadyMinReqs || end <= start {
		return &Steadiness{Reason: fmt.Sprintf("%d completed requests: at least %d are needed to test for drift", n, steadyMinReqs)}
	}
	// the windows span the sending, first sent → last sent: after the last send an open loop
	// only drains, and its in-flight count falls whatever the server did
	lastSent := int64(0)
	for _, o := range s.obs {
		lastSent = max(lastSent, o.sent)
	}
	if lastSent > start {
		end = lastSent
	}
	k := min(20, max(5, n/8))
	w := float64(end-start) / float64(k)
	bucket := func(t int64) int { return min(k-1, max(0, int(float64(t-start)/w))) }
	ttfts, itls, queues := make([][]float64, k), make([][]float64, k), make([][]float64, k)
	tokens, inflight := make([]float64, k), make([]float64, k)
	for _, o := range s.obs {
		b := bucket(o.sent)
		if !math.IsNaN(float64(o.ttft)) {
			ttfts[b] = append(ttfts[b], float64(o.ttft))
		}
		if !math.IsNaN(float64(o.itl)) {
			itls[b] = append(itls[b], float64(o.itl))
		}
		queues[b] = append(queues[b], float64(o.queue))
		if o.end <= end {
			tokens[bucket(o.end)] += float64(o.tokens) // completions after the last send drain, they measure no window
		}
		// time in flight inside each window, so the mean in flight per window is Little's law
		for i := bucket(o.sent); i <= bucket(o.end); i++ {
			lo, hi := float64(start)+float64(i)*w, float64(start)+float64(i+1)*w
			inflight[i] += max(0, min(hi, float64(o.end))-max(lo, float64(o.sent)))
		}
	}
	st := &Steadiness{Tested: true, Windows: k}
	mid := func(i int) float64 { return (float64(i) + 0.5) * w }
	series := func(metric, unit string, scale float64, vals func(i int) (float64, bool)) {
		var xs, ts []float64
		for i := range k {
			if v, ok := vals(i); ok {
				xs, ts = append(xs, v/scale), append(ts, mid(i))
			}
		}
		if d, ok := trend(metric, unit, xs, ts); ok {
			st.Drifts = append(st.Drifts, d)
		}
	}
	median := func(v [][]float64) func(int) (float64, bool) {
		return func(i int) (float64, bool) {
			if len(v[i]) == 0 {
				return 0, false
			}
			slices.Sort(v[i])
			return Quantile(v[i], 50), true
		}
	}
	series("ttft", "ms", 1e6, median(ttfts))
	series("itl", "ms", 1e6, median(itls))
	series("output_throughput", "tok/s", 1, func(i int) (float64, bool) { return tokens[i] / (w / 1e9), true })
	if open {
		before := len(st.Drifts)
		series("in_flight", "requests", 1, func(i int) (float64, bool) { return inflight[i] / w, true })
		series("client_queue", "ms", 1e6, median(queues))
		for _, d := range st.Drifts[before:] {
			st.Queueing = st.Queueing || d.Direction == "rose"
		}
	}
	st.Steady = len(st.Drifts) == 0
	return st
}

// trend is the Mann–Kendall test of xs at times ts (ns) and its size, as a Drift when
// significant and large enough.
func trend(metric, unit string, xs, ts []float64) (Drift, bool) {
	n := len(xs)
	if n < 5 {
		return Drift{}, false
	}
	var s float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			s += sign(xs[j] - xs[i])
		}
	}
	// variance with the tie correction Σ t(t−1)(2t+5) over groups of equal values
	sorted := slices.Sorted(slices.Values(xs))
	v := float64(n*(n-1)*(2*n+5)) / 18
	for i := 0; i < n; {
		j := i
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		v -= t * (t - 1) * (2*t + 5) / 18
		i = j
	}
	if v <= 0 || s == 0 {
		return Drift{}, false
	}
	z := (s - sign(s)) / math.Sqrt(v)
	p := math.Erfc(math.Abs(z) / math.Sqrt2)
	// The size is the change between the medians of the first and last thirds of the windows.
	// Sen's slope (the median of the pairwise slopes) was tried first: for a step — throttling
	// that begins part-way — most pairs lie within one side of the step, their slopes are about
	// zero, and a 2× slow-down a third into a run came out as a 0% change and went unflagged.
	third := max(1, n/3)
	first, last := slices.Sorted(slices.Values(xs[:third])), slices.Sorted(slices.Values(xs[n-third:]))
	delta := Quantile(last, 50) - Quantile(first, 50)
	med := Quantile(sorted, 50)
	change := math.Inf(1)
	if med != 0 {
		change = math.Abs(delta) / math.Abs(med)
	}
	if p >= steadyAlpha || change < steadyMinChange || delta == 0 || (delta > 0) != (s > 0) {
		return Drift{}, false
	}
	dir := "rose"
	if delta < 0 {
		dir = "fell"
	}
	// per minute: the change over the time between the thirds' middles
	dt := (ts[n-1-third/2] + ts[n-1-(third-1)/2] - ts[third/2] - ts[(third-1)/2]) / 2
	return Drift{Metric: metric, Direction: dir, PerMinute: delta / dt * 60e9, Unit: unit, Change: change, P: p}, true
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// steadyWarning names what drifted, or nothing for a steady (or untested) run.
func steadyWarning(st *Steadiness) []string {
	if st == nil || !st.Tested || st.Steady {
		return nil
	}
	var out []string
	if st.Queueing {
		out = append(out, "unbounded queueing: requests in flight (or waiting in the client for a slot) grew through the window: the arrival rate is above the server's capacity, so the run measures a growing queue, not the server; lower --rate")
	}
	for _, d := range st.Drifts {
		if st.Queueing && (d.Metric == "in_flight" || d.Metric == "client_queue") {
			continue
		}
		out = append(out, fmt.Sprintf("not steady: %s %s by %.3g %s per minute (%.0f%% over the window; Mann–Kendall p = %.2g over %d windows): the server changed during the measurement (warmup too short, throttling, a growing queue); see docs/metrics.md \"Steady state\"",
			driftName(d.Metric), d.Direction, math.Abs(d.PerMinute), d.Unit, 100*d.Change, d.P, st.Windows))
	}
	return out
}

func driftName(m string) string {
	switch m {
	case "ttft":
		return "TTFT p50"
	case "itl":
		return "ITL p50"
	case "output_throughput":
		return "output throughput"
	case "in_flight":
		return "requests in flight"
	}
	return "client queue time p50"
}
