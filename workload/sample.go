package workload

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
)

// sampleKey is item idx's place in the seeded shuffle. mix64 is a bijection, so distinct
// items get distinct keys, and sorting by key is a seeded pseudo-random permutation: taking
// the first Count valid items in key order is vLLM's "shuffle, then take the first N valid",
// without holding the file in memory to shuffle it.
func sampleKey(seed int64, idx int) uint64 {
	return mix64(mix64(uint64(seed)) + uint64(idx)*0x9e3779b97f4a7c15)
}

// smallest keeps the n values of smallest key offered to it. Which values it ends with does
// not depend on the order of the offers, so measuring candidates in parallel batches cannot
// change the sample.
type smallest[T any] struct {
	n int
	h keyHeap[T]
}

type keyed[T any] struct {
	key uint64
	v   T
}

// keyHeap is a max-heap on key: the root is the first value to evict.
type keyHeap[T any] []keyed[T]

func (h keyHeap[T]) Len() int           { return len(h) }
func (h keyHeap[T]) Less(i, j int) bool { return h[i].key > h[j].key }
func (h keyHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap[T]) Push(x any)        { *h = append(*h, x.(keyed[T])) }
func (h *keyHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (s *smallest[T]) full() bool { return len(s.h) >= s.n }

// bound is the largest key kept; a key at or above it cannot enter a full set.
func (s *smallest[T]) bound() uint64 { return s.h[0].key }

func (s *smallest[T]) offer(key uint64, v T) {
	switch {
	case !s.full():
		heap.Push(&s.h, keyed[T]{key, v})
	case key < s.bound():
		s.h[0] = keyed[T]{key, v}
		heap.Fix(&s.h, 0)
	}
}

// sorted returns the values in ascending key order.
func (s *smallest[T]) sorted() []T {
	sort.Slice(s.h, func(i, j int) bool { return s.h[i].key < s.h[j].key })
	out := make([]T, len(s.h))
	for i := range s.h {
		out[i] = s.h[i].v
	}
	return out
}

// sampleBatch is how many candidates are measured together: enough to keep a few tokenizer
// round trips in flight, few enough that memory stays bounded.
const sampleBatch = 64

// sampleShareGPT streams the file and keeps the s.Count valid conversations of smallest key.
// pick chooses the turns of an item (nil: not eligible); measure counts their tokens and
// applies the filters. A candidate whose key cannot enter the sample is never measured, so
// only about Count·(1+ln(items/Count)) conversations cost tokenizer calls.
func sampleShareGPT[T any](ctx context.Context, s *ShareGPT, r io.Reader, name string,
	pick func(*sgItem, int) []sgTurn, measure func(context.Context, []sgTurn) (T, bool, error)) ([]T, error) {
	keep := smallest[T]{n: s.Count}
	type pending struct {
		key   uint64
		idx   int
		turns []sgTurn
		v     T
		ok    bool
		err   error
	}
	// While one batch is measured the next is decoded, so reading the file and counting
	// tokens overlap; the bound a candidate is checked against is then at most two batches
	// stale, which only costs a few extra measurements (a stale bound is a higher one).
	var batch, measuring []pending
	var measured chan struct{} // closed when the batch in measuring is done; nil when none
	finish := func() error {
		if measured == nil {
			return nil
		}
		<-measured
		measured = nil
		for i := range measuring {
			p := &measuring[i]
			if p.err != nil {
				return fmt.Errorf("%s: item %d: count tokens: %w", name, p.idx, p.err)
			}
			if p.ok {
				keep.offer(p.key, p.v)
			}
		}
		return ctx.Err()
	}
	defer finish() // on an early error, do not leave the measuring goroutines behind
	flush := func() error {
		if err := finish(); err != nil {
			return err
		}
		measuring, batch = batch, measuring[:0]
		done := make(chan struct{})
		measured = done
		go func(b []pending) {
			parallel(len(b), func(i int) {
				p := &b[i]
				p.v, p.ok, p.err = measure(ctx, p.turns)
			})
			close(done)
		}(measuring)
		return nil
	}
	total := 0
	err := scanShareGPT(r, name, s.MaxRecordBytes, func(idx int, it *sgItem) error {
		total = idx + 1
		key := sampleKey(s.Seed, idx)
		if keep.full() && key >= keep.bound() {
			return nil
		}
		turns := pick(it, s.MaxTurns)
		if len(turns) < 2 {
			return nil
		}
		batch = append(batch, pending{key: key, idx: idx, turns: turns})
		if len(batch) == sampleBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = finish()
	}
	if err != nil {
		return nil, err
	}
	if !keep.full() {
		if total == 0 {
			return nil, fmt.Errorf("%s: %w: the array is empty", name, ErrNoRequests)
		}
		return nil, &TooFewError{Name: name, Usable: len(keep.h), Total: total, Want: s.Count}
	}
	return keep.sorted(), nil
}

// parallel runs f(0) … f(n-1) on a few goroutines: tokenizer calls usually wait on a server,
// not on our CPU.
func parallel(n int, f func(i int)) { parallelW(n, 4, func(_, i int) { f(i) }) }

// parallelW runs f(w, i) for i in [0, n) on the given number of goroutines; w is the
// goroutine's number, for per-goroutine state.
func parallelW(n, workers int, f func(w, i int)) {
	var wg sync.WaitGroup
	for w := range min(workers, n) {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(w, i)
			}
		})
	}
	wg.Wait()
}

// TooFewError says a dataset has fewer usable items than the workload asked for, so that the
// caller can name what it asked for (measured and warmup requests) and make it a usage error.
type TooFewError struct {
	Name                string // the dataset's name in messages
	Usable, Total, Want int    // items that pass the filters, items read, items asked for
}

// Error implements error.
func (e *TooFewError) Error() string {
	return fmt.Sprintf("%s: only %d of its %d conversations pass the filters, fewer than the %d asked for",
		e.Name, e.Usable, e.Total, e.Want)
}

// Unwrap makes a TooFewError an ErrTooFew.
func (e *TooFewError) Unwrap() error { return ErrTooFew }
