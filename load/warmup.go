package load

import (
	"math"
	"slices"
	"sync"

	"servebench/record"
)

// Warming until warm. A fixed count of warmup requests trusts that one request per slot was
// enough; real engines capture CUDA graphs per batch shape, autotune kernels and fill caches
// for far longer. With Config.WarmupAuto the warmup goes on, at the run's own load shape,
// until it stops moving: the completed warmup requests are cut into windows of warmWindow
// requests (one per slot, at least 8), and warming stops when the last window's median TTFT,
// median ITL and output tokens/s are each within WarmupTolerance of the window before it, for
// two windows in a row — or at the caps, which the run-end line names (and the summary warns
// of). Requests already in flight when warming stops stay warmup.

// autoWarm is the state of an automatic warmup, guarded by state.mu (start, done, end) and
// by its own mutex (the records writer's observations).
type autoWarm struct {
	done  bool // warming stopped
	end   int  // the first measured request's index
	why   string
	start int64 // ns since t0 of the first warmup request

	mu      sync.Mutex
	window  []warmObs
	last    []float64 // the previous window's [ttft, itl, tokens/s]
	passes  int
	settled bool // the writer saw convergence; take ends warming at the next request
}

type warmObs struct {
	ttft, itl float64
	end       int64
	tokens    int
}

// warmupCount is how many requests are warmup (take holds s.mu): the fixed count, or with
// WarmupAuto the index at which warming stopped (past every index while it goes on).
func (s *state) warmupCount(now int64) int {
	if !s.cfg.WarmupAuto {
		return s.cfg.Warmup
	}
	w := &s.warm
	if w.done {
		return w.end
	}
	i := s.next
	if i == 0 {
		w.start = now
	}
	w.mu.Lock()
	settled := w.settled
	w.mu.Unlock()
	switch {
	case i < s.cfg.WarmupMin:
		return math.MaxInt
	case settled:
		w.done, w.end, w.why = true, i, "converged"
	case s.cfg.WarmupMax > 0 && i >= s.cfg.WarmupMax:
		w.done, w.end, w.why = true, i, "max requests"
	case s.cfg.WarmupTimeout > 0 && now-w.start >= int64(s.cfg.WarmupTimeout):
		w.done, w.end, w.why = true, i, "max time"
	default:
		return math.MaxInt
	}
	return w.end
}

// warmWindow is the number of completed requests judged together.
func (s *state) warmWindow() int { return max(8, s.cfg.Concurrency, s.cfg.MaxConcurrency) }

// observeWarmup takes a completed warmup record (on the records writer's goroutine).
func (s *state) observeWarmup(rec *record.Record) {
	if !s.cfg.WarmupAuto || rec.Phase != record.PhaseWarmup || !rec.OK() || len(rec.Events) == 0 {
		return
	}
	w := &s.warm
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.settled {
		return
	}
	o := warmObs{ttft: float64(rec.Events[0].T - rec.Sent), itl: math.NaN(), end: rec.Done, tokens: rec.OutputTokens}
	if n := len(rec.Events); n > 1 {
		o.itl = float64(rec.Events[n-1].T-rec.Events[0].T) / float64(n-1)
	}
	w.window = append(w.window, o)
	if len(w.window) < s.warmWindow() {
		return
	}
	cur := windowFigures(w.window)
	w.window = w.window[:0]
	if w.last != nil {
		if within(w.last, cur, s.cfg.WarmupTolerance) {
			w.passes++
		} else {
			w.passes = 0
		}
	}
	w.last = cur
	w.settled = w.passes >= 2
}

// windowFigures are a window's median TTFT, median ITL and output tokens/s.
func windowFigures(ws []warmObs) []float64 {
	var t, i []float64
	first, last, tokens := int64(math.MaxInt64), int64(0), 0
	for _, o := range ws {
		t = append(t, o.ttft)
		if !math.IsNaN(o.itl) {
			i = append(i, o.itl)
		}
		first, last, tokens = min(first, o.end), max(last, o.end), tokens+o.tokens
	}
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	rate := math.NaN()
	if last > first {
		rate = float64(tokens) / (float64(last-first) / 1e9)
	}
	return []float64{med(t), med(i), rate}
}

// within reports whether every figure of b is within tol (relative) of a's; a figure that is
// undefined on either side is not judged.
func within(a, b []float64, tol float64) bool {
	for k := range a {
		if math.IsNaN(a[k]) || math.IsNaN(b[k]) || a[k] == 0 {
			continue
		}
		if math.Abs(b[k]-a[k])/math.Abs(a[k]) > tol {
			return false
		}
	}
	return true
}

// result is the warmup's request count and why it stopped, for the run-end line.
func (w *autoWarm) result(s *state) (int, string) {
	if !s.cfg.WarmupAuto {
		return 0, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !w.done {
		return s.next, "not reached" // the run ended while still warming
	}
	return w.end, w.why
}
