package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"servebench/stat"
)

// LateWarmup names the measured requests that ran before the server was warm, in a run
// whose --warmup auto had stopped: the warmup judge decides on the last few windows of the
// warmup alone (three that agree, or six with no fall), and beside a busy client their ITL
// swings as much as a cold phase's last fall, so it can stop early. The measured run is the reference the judge
// lacked: its later requests show what warm is, and its first ones can be held to them.
type LateWarmup struct {
	Requests int     `json:"requests"` // the first N measured requests (in send order)
	Ratio    float64 `json:"ratio"`    // their median ITL over the rest's
	P        float64 `json:"p"`        // Pettitt's one-sided p of the split after the first N
	// Seconds is how long before the (N+1)-th measured request's send the first was sent:
	// how much too early measuring began.
	Seconds float64 `json:"seconds"`
	// Warmup is the warmup's request count, and Suggest a fixed --warmup that would have
	// covered the slow ones (Warmup + Requests).
	Warmup  int `json:"warmup_requests"`
	Suggest int `json:"suggest_warmup"`
}

// lateWarmup looks, in a run that warmed with --warmup auto until it stopped (converged or
// at a cap), for measured requests at the window's start that ran slower than the rest in
// ITL (each request's mean gap, last event − first over the gaps, so its output length
// does not weigh in). The split is Pettitt's change point (stat.PettittDown) over the
// requests in send order, the first N slower, N from min_per_window to half of them: a
// rank test, so the noise it holds the split to is the run's own, however busy the client
// (beside two busy loops a window's ITL swings ±5–10%, more than a cold phase's last fall,
// which is how the judge stops early). The first N are late when the split is significant
// (p < transient_alpha/2, as the initial-transient rule) and their median ITL is above the
// rest's by more than --warmup-tolerance, the spread the judge itself allowed. ITL, not
// TTFT: a cold engine slows every step, and a window's few first tokens swing with the
// client's load far more (the judge's reason for ITL too). Requests whose events all came
// in one read (ITL 0: the client was descheduled) carry no figure and are left out.
func (s *steadyAcc) lateWarmup(tol float64, warmup int) *LateWarmup {
	slices.SortFunc(s.obs, func(a, b steadyObs) int { return cmp.Compare(a.sent, b.sent) })
	var xs []float64
	var sent []int64
	for _, o := range s.obs {
		if v := float64(o.itl); !math.IsNaN(v) && v > 0 {
			xs, sent = append(xs, v), append(sent, o.sent)
		}
	}
	if len(xs) < steadyMinReqs {
		return nil
	}
	d, p := stat.PettittDown(xs, steadyMinPerWin, len(xs)/2)
	if d == 0 {
		return nil
	}
	head, rest := stat.Median(xs[:d]), stat.Median(xs[d:])
	if rest <= 0 || head/rest-1 <= tol || p >= transientAlpha/2 {
		return nil
	}
	return &LateWarmup{Requests: d, Ratio: head / rest, P: p, Seconds: float64(sent[d]-sent[0]) / 1e9, Warmup: warmup, Suggest: warmup + d}
}

// lateWarmupWarning names the late requests and what would have covered them.
func lateWarmupWarning(l *LateWarmup) Warning {
	return warn(Distorts, fmt.Sprintf("give --warmup %d (a fixed count that covers them)", l.Suggest),
		"--warmup auto ended %.2g s too early: the first %d measured requests (sent in the window's first %.2g s) ran %.0f%% slower in ITL than the rest (change-point p = %.2g) after %d warmup requests; the server was still warming when measuring began, and these requests are in the figures",
		l.Seconds, l.Requests, l.Seconds, 100*(l.Ratio-1), l.P, l.Warmup)
}
