package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// distinct is a prompt of n one-token words that no other tag's prompt shares.
func distinct(tag string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("%s%d", tag, i)
	}
	return strings.Join(w, " ")
}

// cachedSeq is a sequence of the given prompt text with its block hashes.
func cachedSeq(text string, output, blockSize int) *seq {
	n := countTokens(text)
	q := newSeq(text[:min(8, len(text))], n, output, 1, hashPrompt(text, 0, 1), time.Time{})
	q.hasher = promptBlockHashes(text, nil, 0, blockSize)
	return q
}

// runAlone runs q on an idle scheduler to its end in virtual time and returns its TTFT: the
// roofline durations of the steps up to its first token.
func runAlone(t *testing.T, s *scheduler, q *seq) time.Duration {
	t.Helper()
	if !s.idle() {
		t.Fatal("scheduler not idle")
	}
	s.add(q)
	var now, ttft time.Duration
	for steps := 0; !s.idle(); steps++ {
		now += s.step()
		if ttft == 0 && q.generated > 0 {
			ttft = now
		}
		if s.kvUsed > s.m.kvCapacity || steps > 1e5 {
			t.Fatalf("KV %d of %d after %d steps", s.kvUsed, s.m.kvCapacity, steps)
		}
	}
	return ttft
}

// TestPrefixCacheTTFT: a hit of 2032 of 2048 prompt tokens leaves a 16-token prefill that
// still reads the 2032 cached tokens' KV; the TTFT is exactly that step of the roofline. With
// the cache off the repeat costs the full prefill and reports nothing cached.
func TestPrefixCacheTTFT(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := DefaultConfig()
	m := mustModel(t, c)
	step := func(ctx, n int) time.Duration {
		var w stepWork
		w.add(ctx, n)
		return m.stepTime(w)
	}
	miss, hit := step(0, 2048), step(2032, 16)
	text := words(2048)
	for _, on := range []bool{true, false} {
		s := newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens)
		if on {
			s.cache = newPrefixCache()
		}
		a, b := cachedSeq(text, 4, m.blockSize), cachedSeq(text, 4, m.blockSize)
		ttftA, ttftB := runAlone(t, s, a), runAlone(t, s, b)
		wantB, wantCached := miss, int64(-1)
		if on {
			wantB, wantCached = hit, 2032
		}
		if ttftA != miss || ttftB != wantB || b.cached.Load() != wantCached {
			t.Errorf("cache %v: TTFT %v then %v (cached %d), want %v then %v (cached %d)", on, ttftA, ttftB, b.cached.Load(), miss, wantB, wantCached)
		}
	}
	if hit*5 > miss {
		t.Errorf("a 2032-token hit saves too little: %v against %v", hit, miss)
	}
	t.Logf("2048-token prompt on %s: TTFT %v uncached, %v with 2032 tokens cached", c.Hardware, miss, hit)
}

// TestPrefixCacheEvictsLRU fills a 256-token KV cache (16 blocks): the blocks released
// longest ago go first, and of one request's blocks the tail goes first.
func TestPrefixCacheEvictsLRU(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := DefaultConfig()
	c.KVCacheTokens = 256
	m := mustModel(t, c)
	s := newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens)
	s.cache = newPrefixCache()
	a, b, big := distinct("a", 64), distinct("b", 64), distinct("c", 150)
	for _, step := range []struct {
		text   string
		cached int64
	}{
		{a, 0}, {b, 0}, // 8 blocks cached, free
		{big, 0},   // 150 tokens: evicts a's blocks 3 and 2 (a went first, tail first)
		{a, 32},    // a's blocks 0 and 1 are left; b's block 3 goes
		{b, 48},    // b's first 3 blocks: all a hit may take of 64 tokens
		{big, 128}, // its block 8 went for b's prefill
	} {
		q := cachedSeq(step.text, 1, m.blockSize)
		runAlone(t, s, q)
		if got := q.cached.Load(); got != step.cached {
			t.Errorf("%.6s… (%d tokens): %d cached, want %d", step.text, q.prompt, got, step.cached)
		}
		if s.kvInUse() != 0 || s.kvUsed != s.cache.size()*m.blockSize || s.cache.free != s.cache.size() {
			t.Errorf("idle: in use %d, used %d, %d blocks (%d free)", s.kvInUse(), s.kvUsed, s.cache.size(), s.cache.free)
		}
	}
}

// TestPrefixCacheHeldBlocks: a block a running sequence holds is never evicted.
func TestPrefixCacheHeldBlocks(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := newPrefixCache()
	held, free := c.insert(1), c.insert(2)
	c.release(free)
	if !c.evict() || c.evict() || c.size() != 1 {
		t.Fatalf("evictions: size %d, want only the free block gone", c.size())
	}
	if hit, _ := c.match(nil, []uint64{1, 2}, 2); len(hit) != 1 || hit[0] != held {
		t.Errorf("match after eviction = %v, want the held block", hit)
	}
	c.release(held)
	if !c.evict() || c.size() != 0 || c.free != 0 {
		t.Errorf("after release: size %d, free %d", c.size(), c.free)
	}
}
