package workload_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"servebench/tokenizer"
	"servebench/workload"
)

// bpe is the tokenizer package's test tokenizer: a real byte-level BPE (GPT-2's
// pre-tokenizer, a few merges), so lengths here are what a GPT-2-style server would count.
func bpe(t testing.TB) workload.Tokenizer {
	tk, err := tokenizer.Load(filepath.Join("..", "tokenizer", "testdata", "bytelevel-bpe.json"))
	if err != nil {
		t.Skipf("no local tokenizer: %v", err)
	}
	return tk
}

func TestExactWithBPE(t *testing.T) {
	tok := bpe(t)
	ctx := context.Background()
	sp := workload.SharedPrefix{Groups: 2, PerGroup: 3, PrefixTokens: 300, SuffixTokens: 77, OutputTokens: 5, Seed: 1, Order: workload.OrderInterleaved}
	reqs, exact, err := sp.Generate(ctx, tok)
	if err != nil || !exact {
		t.Fatalf("shared prefix: exact %v, %v", exact, err)
	}
	for _, r := range reqs {
		if n, _ := tok.Count(ctx, r.Prompt); n != 377 {
			t.Fatalf("shared-prefix request %d: %d tokens, want 377", r.ID, n)
		}
	}
	trace := `{"timestamp": 0, "input_length": 700, "output_length": 5, "hash_ids": [1, 2]}
{"timestamp": 10, "input_length": 1100, "output_length": 5, "hash_ids": [1, 2, 3]}
{"timestamp": 20, "input_length": 300, "output_length": 5, "hash_ids": [1]}`
	tr, err := (&workload.Mooncake{Seed: 1}).Read(ctx, strings.NewReader(trace), "t", tok)
	if err != nil || !tr.Exact {
		t.Fatalf("mooncake: exact %v, %v", tr != nil && tr.Exact, err)
	}
	for i, want := range []int{700, 1100, 300} {
		if n, _ := tok.Count(ctx, tr.Requests[i].Prompt); n != want {
			t.Fatalf("trace request %d: %d tokens, want %d", i, n, want)
		}
	}
	// block 1 is 512 tokens of its own, and request 1 starts with request 0's first block
	b1 := tr.Requests[0].Prompt[:strings.Index(tr.Requests[0].Prompt, "\n")+1]
	if n, _ := tok.Count(ctx, b1); n != 512 || !strings.HasPrefix(tr.Requests[1].Prompt, b1) {
		t.Fatalf("block 1: %d tokens; shared %v", n, strings.HasPrefix(tr.Requests[1].Prompt, b1))
	}
}

// BenchmarkShareGPT reads and materialises a sample from files of 10k and 100k generated
// conversations with the local BPE tokenizer, reporting the heap's peak during a read and
// the tokenizer calls per read: both should grow with the sample, not with the file.
func BenchmarkShareGPT(b *testing.B) {
	tok := bpe(b)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("conversations=%dk", n/1000), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "sg.json")
			writeShareGPT(b, path, n)
			st, _ := os.Stat(path)
			for _, count := range []int{1000, 5000} {
				b.Run(fmt.Sprintf("count=%d", count), func(b *testing.B) {
					var calls atomic.Int64
					counting := workload.TokenizerFunc(func(ctx context.Context, s string) (int, error) {
						calls.Add(1)
						return tok.Count(ctx, s)
					})
					b.SetBytes(st.Size())
					peak := watchHeap()
					for i := 0; b.Loop(); i++ {
						s := workload.ShareGPT{Count: count, Seed: int64(i)}
						if _, _, err := s.ReadFile(context.Background(), path, counting); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
					b.ReportMetric(float64(calls.Load())/float64(b.N), "tokenize-calls/op")
				})
			}
		})
	}
}

func writeShareGPT(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := workload.GenShareGPT(w, n, 200, 1); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// watchHeap samples the live heap every few milliseconds until the returned function is
// called, which returns the largest sample. runtime/metrics, unlike ReadMemStats, does not
// stop the world, so the sampling barely disturbs the benchmark.
func watchHeap() func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}
