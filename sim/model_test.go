package sim

import (
	"strings"
	"testing"
	"time"
)

func mustModel(t *testing.T, c Config) *model {
	t.Helper()
	m, err := newModel(&c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDecodeStepLlama8BH100 checks the roofline against the back-of-envelope figure:
// batch-1 decode of Llama-3.1-8B bf16 on one H100 is bound by reading the weights,
// 8.03e9 × 2 B / 3.35 TB/s ≈ 4.8 ms, plus the step overhead.
func TestDecodeStepLlama8BH100(t *testing.T) {
	c := DefaultConfig()
	m := mustModel(t, c)
	bw := 3.35e12
	weightsOverBW := time.Duration(8.03e9 * 2 / bw * float64(time.Second))
	got := m.decodeStepTime(1, 512) - c.StepOverhead
	if lo, hi := weightsOverBW*80/100, weightsOverBW*120/100; got < lo || got > hi {
		t.Fatalf("decode step without overhead = %v, want within 20%% of %v", got, weightsOverBW)
	}
	t.Logf("batch-1 decode step %v (weights/bandwidth %v, overhead %v)", got+c.StepOverhead, weightsOverBW, c.StepOverhead)
}

func TestRooflineShape(t *testing.T) {
	m := mustModel(t, DefaultConfig())
	// Decode is memory-bound: 64× the batch costs far less than 64× the time.
	if b1, b64 := m.decodeStepTime(1, 1024), m.decodeStepTime(64, 1024); b64 <= b1 || b64 > 3*b1 {
		t.Errorf("decode batch 1 %v, batch 64 %v: want slower but well under 3×", b1, b64)
	}
	// Prefill of 8192 tokens is compute-bound: 2·8.03e9·8192 / (989e12·0.6) ≈ 222 ms.
	var w stepWork
	w.add(0, 8192)
	if got := m.stepTime(w); got < 200*time.Millisecond || got > 300*time.Millisecond {
		t.Errorf("8192-token prefill = %v, want ~230 ms (compute-bound)", got)
	}
	// Tensor parallelism splits the work but adds all-reduces.
	c := DefaultConfig()
	c.TP = 2
	m2 := mustModel(t, c)
	one, two := m.decodeStepTime(1, 1024), m2.decodeStepTime(1, 1024)
	if two >= one || two < one/2 {
		t.Errorf("tp=2 decode %v vs tp=1 %v: want faster but not more than 2×", two, one)
	}
	// The KV cache takes what the weights leave: 8B on an 80 GB H100 holds ~400k tokens.
	if m.kvCapacity < 300_000 || m.kvCapacity > 600_000 {
		t.Errorf("kv capacity %d tokens, want 300k–600k", m.kvCapacity)
	}
}

func TestModelDoesNotFit(t *testing.T) {
	c := DefaultConfig()
	c.ModelPreset = "llama-3.1-70b"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--tp") {
		t.Fatalf("70B on one H100: err = %v, want a message pointing at --tp", err)
	}
	c.TP = 4
	if err := c.Validate(); err != nil {
		t.Fatalf("70B on 4×H100: %v", err)
	}
}

// simReq is one request of a virtual-time simulation.
type simReq struct {
	at             time.Duration
	prompt, output int
}

// simOut is what each request saw in virtual time.
type simOut struct {
	ttft, meanITL []time.Duration
	end           time.Duration
	preemptions   int64
}

// simulate runs the scheduler in virtual time (no wall clock): requests arrive at their
// offsets, every step advances the clock by its roofline duration.
func simulate(t *testing.T, c Config, reqs []simReq) simOut {
	t.Helper()
	s := newScheduler(mustModel(t, c), c.MaxNumSeqs, c.MaxNumBatchedTokens)
	type obs struct{ first, last time.Duration }
	seen := map[*seq]*obs{}
	qs := make([]*seq, len(reqs))
	var now time.Duration
	next, finished := 0, 0
	for finished < len(reqs) {
		for next < len(reqs) && reqs[next].at <= now {
			qs[next] = newSeq("r", reqs[next].prompt, reqs[next].output, 1, 0, time.Time{})
			s.add(qs[next])
			next++
		}
		if s.idle() {
			now = reqs[next].at
			continue
		}
		now += s.step()
		for _, q := range s.emitted {
			o := seen[q]
			if o == nil {
				o = &obs{first: now}
				seen[q] = o
			}
			o.last = now
			if q.generated >= q.target {
				finished++
			}
		}
		if now > time.Hour {
			t.Fatal("simulation did not finish")
		}
	}
	out := simOut{end: now, preemptions: s.preemptions}
	for i, q := range qs {
		o := seen[q]
		out.ttft = append(out.ttft, o.first-reqs[i].at)
		if q.target > 1 {
			out.meanITL = append(out.meanITL, (o.last-o.first)/time.Duration(q.target-1))
		}
	}
	return out
}

func burst(n, prompt, output int) []simReq {
	r := make([]simReq, n)
	for i := range r {
		r[i] = simReq{0, prompt, output}
	}
	return r
}

func TestITLGrowsWithBatch(t *testing.T) {
	c := DefaultConfig()
	prev := time.Duration(0)
	for _, n := range []int{1, 16, 64, 256} {
		itl := median(simulate(t, c, burst(n, 512, 128)).meanITL)
		t.Logf("batch %3d: ITL %v", n, itl)
		if itl <= prev {
			t.Errorf("batch %d ITL %v not above the smaller batch's %v", n, itl, prev)
		}
		prev = itl
	}
}

func TestTTFTGrowsWithPromptLength(t *testing.T) {
	c := DefaultConfig()
	prev := time.Duration(0)
	for _, p := range []int{128, 1024, 8192, 32768} {
		ttft := simulate(t, c, burst(1, p, 4)).ttft[0]
		t.Logf("prompt %5d: TTFT %v", p, ttft)
		if ttft <= prev {
			t.Errorf("prompt %d TTFT %v not above the shorter prompt's %v", p, ttft, prev)
		}
		prev = ttft
	}
}

func TestQueueingBeyondMaxNumSeqs(t *testing.T) {
	c := DefaultConfig()
	c.MaxNumSeqs = 4
	out := simulate(t, c, burst(8, 256, 64))
	firstWave, secondWave := out.ttft[:4], out.ttft[4:]
	for i, tt := range secondWave {
		if tt < 10*firstWave[0] {
			t.Errorf("request %d (queued behind max-num-seqs) TTFT %v, want ≫ first wave's %v", i+4, tt, firstWave[0])
		}
	}
}

func TestThroughputSaturates(t *testing.T) {
	c := DefaultConfig()
	c.MaxNumSeqs = 64
	thr := func(n int) float64 {
		out := simulate(t, c, burst(n, 256, 256))
		return float64(n*256) / out.end.Seconds()
	}
	t1, t16, t64, t256 := thr(1), thr(16), thr(64), thr(256)
	t.Logf("output tokens/s: 1→%.0f 16→%.0f 64→%.0f 256→%.0f", t1, t16, t64, t256)
	if t16 < 8*t1 || t64 < 2*t16 {
		t.Errorf("throughput should scale at small batch: %.0f %.0f %.0f", t1, t16, t64)
	}
	if t256 > 1.1*t64 {
		t.Errorf("throughput beyond max-num-seqs grew from %.0f to %.0f, want saturated", t64, t256)
	}
}

func TestKVExhaustionPreempts(t *testing.T) {
	c := DefaultConfig()
	c.KVCacheTokens = 4000
	out := simulate(t, c, burst(16, 200, 400)) // 16 × 600 tokens of context ≫ 4000
	if out.preemptions == 0 {
		t.Fatal("no preemption with the KV cache 2.4× oversubscribed")
	}
	t.Logf("%d preemptions; all 16 requests finished at %v", out.preemptions, out.end)
}
