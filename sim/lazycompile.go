package sim

import (
	"math/bits"
	"sync"
	"time"
)

// lazyCompile models an engine that compiles its kernels for a shape the first time a step
// has it, on the request path: llama.cpp's Vulkan backend builds pipelines per matrix shape,
// torch.compile and TensorRT-LLM specialise per batch size. Two parts of a step's shape
// each compile once per bucket: its batch size (the sequences in the step) and its prefill
// length (the prompt tokens it computes), each rounded up to a power of two up to
// maxCaptureSize (512). Longer prefills run in the largest shape: engines cut a prompt into
// micro-batches (llama.cpp's --ubatch-size, 512 by default), so a longer one meets no new
// kernel shape. A warmup that sent every user's request at once meets the large batch and the large
// multi-prompt prefill, and the drain the small batches; a lone prompt admitted while others
// decode is a prefill length of its own, which is how a real server stayed cold after a
// warmup of one request per slot.
type lazyCompile struct {
	cost           time.Duration // 0 = off
	seqs, prefills uint64        // bit i set: bucket 2^i has been compiled
}

// compile returns what a step of seqs sequences computing prefill prompt tokens pays for its
// shapes' first use: cost per new bucket.
func (l *lazyCompile) compile(seqs, prefill int) time.Duration {
	if l.cost <= 0 {
		return 0
	}
	n := time.Duration(0)
	for _, b := range []struct {
		set *uint64
		v   int
	}{{&l.seqs, seqs}, {&l.prefills, prefill}} {
		if b.v < 1 {
			continue
		}
		bit := uint64(1) << bits.Len(uint(min(b.v, maxCaptureSize)-1)) // 2^⌈log2 v⌉, at most 512
		if *b.set&bit == 0 {
			*b.set |= bit
			n++
		}
	}
	return n * l.cost
}

// compile is the lazy compilation a step pays (see lazyCompile).
func (sc *startupCost) compile(seqs, prefill int) time.Duration {
	if sc == nil {
		return 0
	}
	return sc.lazy.compile(seqs, prefill)
}

// logCompile keeps a compiling step's span and shape for Phases.
func (sc *startupCost) logCompile(start, end time.Time, seqs, prefill int) {
	sc.phases.compiles.add(Compile{Start: start, End: end, Seqs: seqs, Prefill: prefill})
}

// Compile is one engine step that paid a lazy compilation: its start and end on the engine's
// schedule, and its shape: Seqs sequences, Prefill prompt tokens computed. A request in
// flight across it was served by a cold engine. Its batch-size bucket was the new one when
// no earlier compile's Seqs fell in that bucket (every first use of a bucket compiles).
type Compile struct {
	Start, End    time.Time
	Seqs, Prefill int
}

// compileLog is the compiling steps, read by Phases while the engine appends. There are at
// most two per bucket, so it stays small.
type compileLog struct {
	mu   sync.Mutex
	list []Compile
}

func (l *compileLog) add(c Compile) {
	l.mu.Lock()
	l.list = append(l.list, c)
	l.mu.Unlock()
}

func (l *compileLog) all() []Compile {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Compile(nil), l.list...)
}
