package compare

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// The false-alarm and detection rates of compare's verdict, measured on runs drawn from a
// generative model of a served LLM's requests (docs/compare-evidence.md quotes the table):
//
//   - each run draws a run-level effect: every latency of the run is multiplied by
//     exp(N(0, RunSD)) (the machine's state, the batch mix; 2% by default, the spread of TTFT
//     and throughput between identical runs on a quiet machine);
//   - a run is a closed loop of Users users sending Requests requests in all; a request's TTFT
//     is TTFT·exp(x) and its mean gap ITL·exp(y), where x and y follow AR(1) processes over
//     the run's requests (ρ = 0.6: neighbours share batches and queues) with spreads 0.25
//     and 0.1; each of its Tokens−1 gaps varies by exp(N(0, 0.15)) around that mean;
//   - a change multiplies every latency of the candidate by a factor (1.05, 1.1, 2, 10), so
//     the throughput falls by as much.
//
// go test ./compare -run TestCompareRates -v -args -rates-full prints the full table (A/A at
// 1, 2, 3 and 6 runs per side, also with a 5% run-to-run spread, and A/B at every change);
// without the flag the test runs the A/A rows and a few A/B cells, and asserts them.
var ratesFull = flag.Bool("rates-full", false, "TestCompareRates: print the full table of false-alarm and detection rates")

type genModel struct {
	RunSD           float64
	Users, Requests int
	Tokens          int
	TTFT, ITL       float64 // ms
}

var defaultModel = genModel{RunSD: 0.02, Users: 4, Requests: 96, Tokens: 8, TTFT: 50, ITL: 20}

// genSide draws runs runs of the model with every latency multiplied by factor.
func genSide(rng *rand.Rand, m genModel, runs int, factor float64) *Side {
	s := NewSide(&record.Header{Workload: record.Workload{Hash: "sha256:sim"}}, metrics.Options{})
	for run := range runs {
		eff := factor * math.Exp(m.RunSD*rng.NormFloat64())
		free := make([]int64, m.Users) // when each user's slot frees, ns
		var x, y float64
		const rho = 0.6
		for i := range m.Requests {
			x = rho*x + math.Sqrt(1-rho*rho)*0.25*rng.NormFloat64()
			y = rho*y + math.Sqrt(1-rho*rho)*0.1*rng.NormFloat64()
			u := i % m.Users
			sent := int64(run)*1e12 + free[u] + 1
			t := sent + int64(m.TTFT*eff*math.Exp(x)*1e6)
			r := record.Record{Run: run, ID: i, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent,
				FirstEvent: t, OutputTokens: m.Tokens, OutputTokensSource: record.SourceServer,
				PromptTokens: 64, PromptTokensSource: record.SourceServer}
			r.Events = append(r.Events, record.Event{T: t, N: 1})
			gap := m.ITL * eff * math.Exp(y)
			for range m.Tokens - 1 {
				t += int64(gap * math.Exp(0.15*rng.NormFloat64()) * 1e6)
				r.Events = append(r.Events, record.Event{T: t, N: 1})
			}
			r.Done = t + 1e5
			free[u] = r.Done - int64(run)*1e12
			s.Add(&r)
		}
	}
	return s
}

// rates is what n comparisons of runs-per-side runs found, at a true factor.
type rates struct {
	n                                 int
	changed, regressed, inconclusive  int
	ttftSignificant, outSignificant   int
	decideSum, decideN, undecidedOver int
}

func measure(m genModel, runs, n int, factor float64, seed uint64) rates {
	rng := rand.New(rand.NewPCG(seed, uint64(runs)))
	var r rates
	for range n {
		res := Compare(genSide(rng, m, runs, 1), genSide(rng, m, runs, factor), Options{})
		r.n++
		switch res.Verdict {
		case Regressed:
			r.regressed++
			r.changed++
		case Improved:
			r.changed++
		case Inconclusive:
			r.inconclusive++
			if res.Decide > 0 {
				r.decideSum += res.Decide
				r.decideN++
			} else {
				r.undecidedOver++
			}
		}
		for _, row := range res.Rows {
			if row.Metric.Name == TTFTp50.Name && row.Significant {
				r.ttftSignificant++
			}
			if row.Metric.Name == OutputTPS.Name && row.Significant {
				r.outSignificant++
			}
		}
	}
	return r
}

func pct(k, n int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n)) }

// TestCompareRates: A/A comparisons (the same model twice) at 1, 3 and 6 runs per side are
// called changed (improved or regressed) at most 5% of the time, and a single metric's
// interval excludes zero about 5% of the time (its nominal level); A/B at 10× is called
// regressed at 3 runs per side every time.
func TestCompareRates(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine, ten times the time under it")
	}
	t.Parallel() // shares nothing with the other tests: with t.Parallel they use both cores
	n := 100
	if testing.Short() {
		n = 40
	}
	for _, runs := range []int{1, 3, 6} {
		r := measure(defaultModel, runs, n, 1, 1)
		t.Logf("A/A, %d runs a side, %d comparisons: changed %s, inconclusive %s, TTFT p50 significant %s, output tok/s significant %s",
			runs, r.n, pct(r.changed, r.n), pct(r.inconclusive, r.n), pct(r.ttftSignificant, r.n), pct(r.outSignificant, r.n))
		if float64(r.changed) > 0.05*float64(r.n) {
			t.Errorf("A/A at %d runs a side: called changed in %d of %d comparisons (> 5%%)", runs, r.changed, r.n)
		}
		if float64(r.ttftSignificant) > 0.12*float64(r.n) {
			t.Errorf("A/A at %d runs a side: TTFT p50 significant in %d of %d (nominal 5%%)", runs, r.ttftSignificant, r.n)
		}
	}
	r := measure(defaultModel, 3, n/2, 10, 2)
	if r.regressed != r.n {
		t.Errorf("10x slower at 3 runs a side: regressed in %d of %d comparisons", r.regressed, r.n)
	}
	if *ratesFull {
		t.Log("\n" + ratesTable())
	}
}

// ratesTable is the full table, in Markdown, for docs/compare-evidence.md.
func ratesTable() string {
	const n = 150
	var b strings.Builder
	b.WriteString("| runs per side | run-to-run spread | true change | called changed | regressed | inconclusive | TTFT p50 significant | runs to decide (mean) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, sd := range []float64{0.02, 0.05} {
		m := defaultModel
		m.RunSD = sd
		for _, runs := range []int{1, 2, 3, 6} {
			for _, f := range []float64{1, 1.05, 1.1, 2, 10} {
				if sd != 0.02 && f != 1 {
					continue
				}
				r := measure(m, runs, n, f, 7)
				dec := "—"
				if r.undecidedOver > 0 {
					dec = "none decides"
				}
				if r.decideN > 0 {
					dec = fmt.Sprintf("%.1f (%d none decides)", float64(r.decideSum)/float64(r.decideN), r.undecidedOver)
				}
				change := "none (A/A)"
				if f != 1 {
					change = fmt.Sprintf("×%g latency", f)
				}
				fmt.Fprintf(&b, "| %d | %.0f%% | %s | %s | %s | %s | %s | %s |\n", runs, 100*sd, change,
					pct(r.changed, n), pct(r.regressed, n), pct(r.inconclusive, n), pct(r.ttftSignificant, n), dec)
			}
		}
	}
	return b.String()
}
