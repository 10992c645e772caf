package load

import (
	"slices"
	"sync"
	"sync/atomic"
)

// liveTTFTs is how many recent first tokens Live keeps for its TTFT p50.
const liveTTFTs = 512

// Live counts what a run is doing while it happens, for a progress line: requests in flight,
// tokens streamed as their events arrive (not when requests complete), and the TTFT of the
// latest first tokens. Requests' observers update it with atomics (a mutex only at a first
// token); a reader may Snapshot it at any time. The zero value is ready; a nil *Live counts
// nothing.
type Live struct {
	inFlight, warmup atomic.Int64 // requests dispatched and not yet returned; of which warmup
	tokens, events   atomic.Int64 // content events streamed, and their tokens (one when unknown)

	mu   sync.Mutex
	ttft []float64 // ns, a ring of the latest liveTTFTs first tokens of measured requests
	next int
	n    int64 // first tokens seen
}

// LiveStats is a snapshot of Live.
type LiveStats struct {
	InFlight, Warmup int64   // requests in flight, of which warmup
	Tokens, Events   int64   // streamed so far
	FirstTokens      int64   // measured requests whose first token arrived
	TTFTP50          float64 // ns, over the latest first tokens; 0 before any
}

func (l *Live) start(warmup bool) {
	if l == nil {
		return
	}
	l.inFlight.Add(1)
	if warmup {
		l.warmup.Add(1)
	}
}

func (l *Live) end(warmup bool) {
	if l == nil {
		return
	}
	l.inFlight.Add(-1)
	if warmup {
		l.warmup.Add(-1)
	}
}

// content counts one content event of n tokens (0: unknown, counted as one).
func (l *Live) content(n int) {
	if l == nil {
		return
	}
	l.events.Add(1)
	l.tokens.Add(int64(max(n, 1)))
}

// first keeps a measured request's TTFT (ns).
func (l *Live) first(ttft int64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if len(l.ttft) < liveTTFTs {
		l.ttft = append(l.ttft, float64(ttft))
		return
	}
	l.ttft[l.next] = float64(ttft)
	l.next = (l.next + 1) % liveTTFTs
}

// Snapshot returns the current counts.
func (l *Live) Snapshot() LiveStats {
	if l == nil {
		return LiveStats{}
	}
	s := LiveStats{InFlight: l.inFlight.Load(), Warmup: l.warmup.Load(), Tokens: l.tokens.Load(), Events: l.events.Load()}
	l.mu.Lock()
	s.FirstTokens = l.n
	if len(l.ttft) > 0 {
		v := slices.Clone(l.ttft)
		slices.Sort(v)
		s.TTFTP50 = v[len(v)/2]
	}
	l.mu.Unlock()
	return s
}
