package workload

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestSharedPrefix(t *testing.T) {
	tok := newlineTokenizer()
	for _, order := range []Order{"", OrderGrouped, OrderInterleaved, OrderShuffled} {
		t.Run(string(order), func(t *testing.T) {
			s := SharedPrefix{Groups: 3, PerGroup: 4, PrefixTokens: 50, SuffixTokens: 20, OutputTokens: 8, Seed: 2, Order: order}
			reqs, exact, err := s.Generate(context.Background(), tok)
			if err != nil || !exact || len(reqs) != 12 {
				t.Fatalf("Generate: %d requests, exact %v, %v", len(reqs), exact, err)
			}
			groups := map[string][]int{} // prefix text → positions
			seen := map[string]bool{}
			for i, r := range reqs {
				n, _ := tok.Count(context.Background(), r.Prompt)
				if r.ID != i || n != 70 || r.InputTokens != 70 || r.OutputTokens != 8 {
					t.Fatalf("request %d: id %d, %d tokens (recorded %d), output %d", i, r.ID, n, r.InputTokens, r.OutputTokens)
				}
				prefix := r.Prompt[:strings.Index(r.Prompt, "\n")+1]
				if n, _ := tok.Count(context.Background(), prefix); n != 50 {
					t.Fatalf("request %d: prefix of %d tokens, want 50", i, n)
				}
				groups[prefix] = append(groups[prefix], i)
				if seen[r.Prompt] {
					t.Fatalf("request %d repeats a prompt", i)
				}
				seen[r.Prompt] = true
			}
			if len(groups) != 3 {
				t.Fatalf("%d distinct prefixes, want 3", len(groups))
			}
			for _, pos := range groups {
				if len(pos) != 4 {
					t.Fatalf("group of %d requests, want 4", len(pos))
				}
				switch order {
				case "", OrderGrouped:
					if pos[3]-pos[0] != 3 {
						t.Errorf("grouped order: a group at %v", pos)
					}
				case OrderInterleaved:
					if pos[1]-pos[0] != 3 || pos[3]-pos[2] != 3 {
						t.Errorf("interleaved order: a group at %v", pos)
					}
				}
			}
			again, _, _ := s.Generate(context.Background(), tok)
			h1, _ := Hash(reqs, s)
			h2, _ := Hash(again, s)
			if h1 != h2 {
				t.Error("two generations differ")
			}
		})
	}
	s := SharedPrefix{Groups: 3, PerGroup: 4, PrefixTokens: 50, SuffixTokens: 20, OutputTokens: 8}
	// each group's first request computes its prefix and the others reuse it: with n
	// requests built of d groups, (n−d)·P / (n·(P+S)), to within a few tokens (Repeats
	// compares text)
	if reqs, _, err := s.Generate(context.Background(), nil); err != nil {
		t.Fatal(err)
	} else if got, want := RepeatedShare(reqs, Repeats(reqs)), 3.0*3*50/(3*4*70); math.Abs(got-want) > 0.03 {
		t.Errorf("repeated share %v, want %v", got, want)
	}
	if _, exact, err := s.Generate(context.Background(), nil); err != nil || exact {
		t.Errorf("without a tokenizer: exact %v, %v", exact, err)
	}
	for _, bad := range []SharedPrefix{{}, {Groups: 1, PerGroup: 1, PrefixTokens: 1, SuffixTokens: 1, OutputTokens: 1, Order: "x"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
