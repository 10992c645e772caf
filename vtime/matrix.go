package vtime

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/sim"
)

// The validation matrix: runs that are steady by construction (a fixed engine model, a
// fixed load shape) and runs that change by construction (a cold start, throttling, a
// throughput step, an open loop above capacity), each run in virtual time and judged by
// the same metrics.Summary that `servebench run` prints. A steady run called not steady is
// a false alarm; a changing run is caught when it is called not steady and the drift names
// a metric the change moves.

// Case is one run of the matrix.
type Case struct {
	Shape    string // the row it is counted in, e.g. "closed 16 users" or "cold start"
	Changing bool
	// Expect are the metrics of which a changing run's drifts must name one ("in_flight"
	// with unbounded queueing for an overload).
	Expect []string
	Sim    sim.Config
	Load   Load
	Label  string // the run's own parameters, for a failure message
}

// Outcome is one case's verdict.
type Outcome struct {
	Case
	Tested, Flagged, Named bool
	// RampIn is a steady-server run without warmup whose only finding was the initial
	// transient of its own load's start (every user's first request at once): true of its
	// figures, so named, and not counted as a false alarm.
	RampIn bool
	Drifts string // metric direction, … as named
	// WarmupWindows and WarmupStop, with WarmupAuto: the judge's windows when it settled,
	// and why warming stopped.
	WarmupWindows int
	WarmupStop    string
	Err           error
}

// capacity is a closed loop's request rate at max-num-seqs users for outputs of out tokens.
func capacity(t *testing.T, c sim.Config, in, out int) float64 {
	res, err := Run(t, c, Load{Users: c.MaxNumSeqs, Requests: 4 * c.MaxNumSeqs, Warmup: c.MaxNumSeqs, InputTokens: in, OutputTokens: out})
	if err != nil {
		return 0
	}
	last := res.Records[len(res.Records)-1].Done
	return float64(len(res.Records)-c.MaxNumSeqs) / (float64(last-res.FirstMeasuredSent) / 1e9)
}

// Cases builds the matrix: full is the whole one (hundreds of runs, about a minute on two
// cores), otherwise the reduced one CI runs.
func Cases(t *testing.T, full bool) []Case {
	users, rpus, outs := []int{1, 16, 256}, []int{5, 20}, []int{8, 64}
	rates, reqs, seeds := []float64{0.1, 0.9}, []int{300}, []uint64{1}
	chUsers, chRPU := []int{4, 64}, []int{20}
	if full {
		users, rpus, outs = []int{1, 4, 16, 64, 256, 1024}, []int{2, 5, 20, 100}, []int{8, 64, 256}
		rates, reqs, seeds = []float64{0.1, 0.5, 0.9}, []int{200, 1000}, []uint64{1, 2}
		chUsers, chRPU = []int{1, 4, 16, 64, 256, 1024}, []int{20, 60}
	}
	base := sim.DefaultConfig()
	const in = 512
	var cs []Case
	warmups := []string{"0", "default", "auto"}
	for _, u := range users {
		for _, rpu := range rpus {
			if u*rpu > 40000 {
				continue // 1,024 users × 100: minutes of events for one row's run
			}
			for _, out := range outs {
				for _, w := range warmups {
					l := Load{Users: u, Requests: u * rpu, InputTokens: in, OutputTokens: out, InputJitter: 0.5, Seed: uint64(u*rpu + out)}
					warm(&l, w)
					cs = append(cs, Case{Shape: fmt.Sprintf("steady closed %d users", u), Sim: base, Load: l,
						Label: fmt.Sprintf("%d users × %d, out %d, warmup %s", u, rpu, out, w)})
				}
			}
		}
	}
	caps := map[int]float64{}
	for _, out := range outs {
		caps[out] = capacity(t, base, in, out)
	}
	for _, f := range rates {
		for _, out := range outs {
			for _, n := range reqs {
				for _, seed := range seeds {
					for _, w := range warmups {
						l := Load{Rate: f * caps[out], Requests: n, InputTokens: in, OutputTokens: out, InputJitter: 0.5, Seed: seed}
						warm(&l, w)
						cs = append(cs, Case{Shape: fmt.Sprintf("steady open %.0f%% of capacity", 100*f), Sim: base, Load: l,
							Label: fmt.Sprintf("rate %.1f/s (%.0f%%), %d requests, out %d, seed %d, warmup %s", l.Rate, 100*f, n, out, seed, w)})
					}
				}
			}
		}
	}
	for _, u := range chUsers {
		for _, rpu := range chRPU {
			if u*rpu > 40000 {
				continue
			}
			for _, out := range outs {
				cs = append(cs, changing(t, base, u, rpu, in, out)...)
			}
		}
	}
	cs = append(cs, noisy(t, base, caps, full)...)
	for _, out := range outs {
		for _, seed := range seeds {
			l := Load{Rate: 1.5 * caps[out], Requests: 6000, Warmup: 10, InputTokens: in, OutputTokens: out, InputJitter: 0.5, Seed: seed}
			cs = append(cs, Case{Shape: "overload (open loop at 150%)", Changing: true, Expect: []string{"in_flight"}, Sim: base, Load: l,
				Label: fmt.Sprintf("rate %.1f/s, out %d, seed %d", l.Rate, out, seed)})
		}
	}
	return cs
}

// liveNoise is what a live run over HTTP on a busy machine has beyond the engine model:
// steps ±10% (uniform lengthening by up to 20%), a 50 ms stall all streams share after one
// step in 500, and one dispatch in 20 late by 5 ms on average.
var liveNoise = Noise{StepJitter: 0.2, StallProb: 0.002, Stall: 50 * time.Millisecond, LateProb: 0.05, Late: 5 * time.Millisecond}

// noisy are the shapes of the HTTP matrix (scripts/validate-steady) in virtual time, with
// realised random arrivals and length mixes per window and liveNoise: steady ones, and
// throttling and an overload laid over them.
func noisy(t *testing.T, base sim.Config, caps map[int]float64, full bool) []Case {
	seeds := 3
	if full {
		seeds = 12
	}
	if caps[64] == 0 {
		caps[64] = capacity(t, base, 512, 64)
	}
	var cs []Case
	for k := range seeds {
		seed := uint64(100 + k)
		lognormal := Load{Users: 16, Requests: 320, Warmup: 16, InputTokens: 512, OutputTokens: 64, InputJitter: 0.5, OutputSigma: 0.5, Seed: seed, Noise: liveNoise}
		open := Load{Rate: 0.5 * caps[64], Requests: 500, Warmup: int(0.5 * caps[64]), InputTokens: 512, OutputTokens: 64, InputJitter: 0.5, Seed: seed, Noise: liveNoise}
		mix := Load{Users: 32, Requests: 320, Warmup: 32, Mix: []Pair{{256, 64, 0.7}, {2048, 256, 0.3}}, InputTokens: 256, OutputTokens: 64, Seed: seed, Noise: liveNoise}
		over := open
		over.Rate, over.Requests, over.Warmup = 1.3*caps[64], int(1.3*caps[64]*20), 10
		label := fmt.Sprintf("seed %d", seed)
		cs = append(cs,
			Case{Shape: "noisy closed 16 users, lognormal output", Sim: base, Load: lognormal, Label: label},
			Case{Shape: "noisy open 50% of capacity", Sim: base, Load: open, Label: label},
			Case{Shape: "noisy closed 32 users, 70/30 length mix", Sim: base, Load: mix, Label: label},
			Case{Shape: "noisy overload (open loop at 130%, 20 s)", Changing: true, Expect: []string{"in_flight"}, Sim: base, Load: over, Label: label})
		if twin, err := Run(t, base, lognormal); err == nil {
			thr := base
			thr.ThrottleAfter, thr.ThrottleFactor = time.Duration(twin.Records[len(twin.Records)-1].Done)/2, 1.5
			cs = append(cs, Case{Shape: "noisy throttle ×1.5 midway", Changing: true, Expect: []string{"ttft", "itl", "output_throughput"}, Sim: thr, Load: lognormal, Label: label})
		}
		// the open loop's throttle: its arrivals keep coming, so throughput holds (75% of the
		// slower capacity) and the server's slowing shows in TTFT and ITL, which the check
		// conditions on the schedule's arrivals: a change must survive that
		if twin, err := Run(t, base, open); err == nil {
			thr := base
			thr.ThrottleAfter, thr.ThrottleFactor = time.Duration(twin.Records[len(twin.Records)-1].Done)/2, 1.5
			cs = append(cs, Case{Shape: "noisy open throttle ×1.5 midway", Changing: true, Expect: []string{"ttft", "itl"}, Sim: thr, Load: open, Label: label})
		}
	}
	return cs
}

// warm sets a load's warmup: "0", "default" (one per slot) or "auto".
func warm(l *Load, w string) {
	switch w {
	case "default":
		l.Warmup = max(l.Users, int(l.Rate), 1)
	case "auto":
		l.WarmupAuto = true
	}
}

// changing is the changing cases of one closed-loop shape, laid over its steady twin: a
// cold phase over the first third of its steps, throttling ×1.5 from 40% of its measured
// window, and a throughput step (×2) from 30%.
func changing(t *testing.T, base sim.Config, users, rpu, in, out int) []Case {
	// at least 60 requests: fewer are not tested at all (metrics needs 40 inside the region)
	l := Load{Users: users, Requests: max(users*rpu, 60), Warmup: users, InputTokens: in, OutputTokens: out, InputJitter: 0.5, Seed: uint64(users + out)}
	twin, err := Run(t, base, l)
	if err != nil {
		return nil
	}
	// the changes are placed in the twin's measured window, which starts after the warmup
	// and its drains (load/drain.go); the engine's clock starts t0Offset after the records'
	from := time.Duration(twin.FirstMeasuredSent - t0Offset)
	dur := time.Duration(twin.Records[len(twin.Records)-1].Done-t0Offset) - from
	label := fmt.Sprintf("%d users × %d, out %d", users, rpu, out)
	cold, thr, step := base, base, base
	cold.ColdSteps, cold.ColdFactor = int(twin.Steps/3), 3
	thr.ThrottleAfter, thr.ThrottleFactor = from+dur*4/10, 1.5
	step.ThrottleAfter, step.ThrottleFactor = from+dur*3/10, 2
	lc := l
	lc.Warmup = 0 // the cold phase is what a warmup would hide
	return []Case{
		{Shape: "cold start, no warmup", Changing: true, Expect: []string{"ttft", "itl", "output_throughput"}, Sim: cold, Load: lc, Label: label},
		{Shape: "throttle ×1.5 at 40%", Changing: true, Expect: []string{"ttft", "itl", "output_throughput"}, Sim: thr, Load: l, Label: label},
		// the step is every engine step taking twice as long: ITL and TTFT rise with it
		{Shape: "throughput step ×½ at 30%", Changing: true, Expect: []string{"output_throughput", "itl", "ttft"}, Sim: step, Load: l, Label: label},
	}
}

// RunCases runs every case on all CPUs.
func RunCases(t *testing.T, cs []Case) []Outcome {
	out := make([]Outcome, len(cs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i] = judge(t, cs[i])
			}
		})
	}
	for i := range cs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// judge runs one case and reads its verdict from the summary servebench would print.
func judge(t *testing.T, c Case) Outcome {
	o := Outcome{Case: c}
	res, err := Run(t, c.Sim, c.Load)
	if err != nil {
		o.Err = err
		return o
	}
	s := Summarize(res)
	st := s.Steadiness
	o.Tested, o.Flagged = st.Tested, st.Tested && !st.Steady
	if !c.Changing && c.Load.Warmup == 0 && !c.Load.WarmupAuto && st.Transient != nil && st.Queue == nil && len(st.Drifts) == 0 {
		o.Flagged, o.RampIn = false, true
	}
	var names []string
	if st.Queue != nil {
		names = append(names, fmt.Sprintf("unbounded queueing %.0f → %.0f", st.Queue.FromN, st.Queue.ToN))
		o.Named = o.Named || slices.Contains(c.Expect, "in_flight")
	}
	if t := st.Transient; t != nil {
		names = append(names, fmt.Sprintf("initial transient (%d requests, %s %.1f×)", t.Requests, t.Metric, t.Ratio))
		o.Named = o.Named || slices.Contains(c.Expect, t.Metric)
	}
	for _, d := range st.Drifts {
		names = append(names, d.Metric+" "+d.Direction)
		if slices.Contains(c.Expect, d.Metric) && (d.Metric != "in_flight" || st.Queueing) {
			o.Named = true
		}
	}
	for _, sc := range st.Series {
		switch {
		case sc.Explained != "":
			names = append(names, "explained: "+sc.Explained)
		case !sc.Tested:
			names = append(names, "untested "+sc.Metric+": "+sc.Reason)
		}
	}
	o.Drifts = strings.Join(names, ", ")
	o.WarmupWindows, o.WarmupStop = res.WarmupWindows, res.End.WarmupStop
	return o
}

// Summarize is the summary `servebench report` gives the run's records file.
func Summarize(res *Result) *metrics.Summary {
	a := metrics.NewAccumulator(metrics.Options{})
	a.SetHeader(res.Header)
	for i := range res.Records {
		a.Add(&res.Records[i])
	}
	return a.Summary()
}

// Rates are a shape's counts: runs, tested, and flagged (false alarms for a steady shape,
// catches naming the right metric for a changing one).
type Rates struct {
	Shape                 string
	Changing              bool
	Runs, Tested, Flagged int
	Named                 int
	RampIn                int // steady runs without warmup whose own ramp-in was named (Outcome.RampIn)
	Errors                int
}

// Tally groups outcomes by shape, steady shapes first.
func Tally(os []Outcome) []Rates {
	by := map[string]*Rates{}
	for _, o := range os {
		r := by[o.Shape]
		if r == nil {
			r = &Rates{Shape: o.Shape, Changing: o.Changing}
			by[o.Shape] = r
		}
		r.Runs++
		if o.Err != nil {
			r.Errors++
			continue
		}
		if o.Tested {
			r.Tested++
		}
		if o.Flagged {
			r.Flagged++
		}
		if o.RampIn {
			r.RampIn++
		}
		if o.Flagged && o.Named {
			r.Named++
		}
	}
	var out []Rates
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Changing != out[j].Changing {
			return !out[i].Changing
		}
		return out[i].Shape < out[j].Shape
	})
	return out
}

// Table prints the rates per shape and overall.
func Table(rs []Rates) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-34s %5s %7s %s\n", "shape", "runs", "tested", "called not steady (steady: false alarms; changing: caught naming the metric)")
	var sr, sf, cr, cn int
	for _, r := range rs {
		if r.Changing {
			fmt.Fprintf(&b, "%-34s %5d %7d caught %d (%.1f%%), naming the metric %d (%.1f%%)\n", r.Shape, r.Runs, r.Tested,
				r.Flagged, pct(r.Flagged, r.Runs), r.Named, pct(r.Named, r.Runs))
			cr, cn = cr+r.Runs, cn+r.Named
		} else {
			fmt.Fprintf(&b, "%-34s %5d %7d false alarms %d (%.1f%%)", r.Shape, r.Runs, r.Tested, r.Flagged, pct(r.Flagged, r.Runs))
			if r.RampIn > 0 {
				fmt.Fprintf(&b, "; without warmup, the load's own ramp-in named as an initial transient %d", r.RampIn)
			}
			b.WriteString("\n")
			sr, sf = sr+r.Runs, sf+r.Flagged
		}
	}
	fmt.Fprintf(&b, "steady by construction: %d runs, %d called not steady (%.1f%%); changing: %d runs, %d caught naming the metric (%.1f%%)\n",
		sr, sf, pct(sf, sr), cr, cn, pct(cn, cr))
	return b.String()
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
