package workload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// charTokenizer counts tokens as a deliberately awkward tokenizer would: every word is one
// token, except words longer than 4 characters, which are two.
func charTokenizer(calls *atomic.Int64) Tokenizer {
	return TokenizerFunc(func(_ context.Context, text string) (int, error) {
		calls.Add(1)
		n := 0
		for _, w := range strings.Fields(text) {
			n++
			if len(w) > 4 {
				n++
			}
		}
		return n, nil
	})
}

func TestSyntheticExactLengths(t *testing.T) {
	var calls atomic.Int64
	tok := charTokenizer(&calls)
	s := Synthetic{Count: 50, InputTokens: 200, OutputTokens: 64, RangeRatio: 0.5, Seed: 3}
	reqs, exact, err := s.Generate(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if !exact {
		t.Fatal("want exact lengths with a tokenizer")
	}
	for _, r := range reqs {
		n, _ := tok.Count(context.Background(), r.Prompt)
		if n != r.InputTokens {
			t.Fatalf("request %d: prompt has %d tokens, recorded %d", r.ID, n, r.InputTokens)
		}
		if r.InputTokens < 100 || r.InputTokens > 300 || r.OutputTokens < 32 || r.OutputTokens > 96 {
			t.Fatalf("request %d: lengths %d/%d outside the range ratio", r.ID, r.InputTokens, r.OutputTokens)
		}
	}
	if calls.Load() > 50*20 {
		t.Errorf("%d tokenizer calls for 50 prompts: the search is too slow", calls.Load())
	}
}

func TestSyntheticDeterministicAndDistinct(t *testing.T) {
	s := Synthetic{Count: 10, InputTokens: 32, OutputTokens: 8, Seed: 1}
	a, exact, _ := s.Generate(context.Background(), nil)
	b, _, _ := s.Generate(context.Background(), nil)
	if exact {
		t.Error("without a tokenizer lengths must be reported approximate")
	}
	seen := map[string]bool{}
	for i := range a {
		if a[i].Prompt != b[i].Prompt {
			t.Fatalf("prompt %d differs between two generations with one seed", i)
		}
		if seen[a[i].Prompt] {
			t.Fatalf("prompt %d repeats an earlier one", i)
		}
		seen[a[i].Prompt] = true
	}
	s.Seed = 2
	c, _, _ := s.Generate(context.Background(), nil)
	if c[0].Prompt == a[0].Prompt {
		t.Error("a different seed gave the same prompt")
	}
}

func TestHashIdentity(t *testing.T) {
	s := Synthetic{Count: 5, InputTokens: 16, OutputTokens: 8, Seed: 1}
	a, _, _ := s.Generate(context.Background(), nil)
	h1, _ := Hash(a, map[string]int{"seed": 1})
	h2, _ := Hash(a, map[string]int{"seed": 1})
	h3, _ := Hash(a, map[string]int{"seed": 2})
	s.OutputTokens = 9
	b, _, _ := s.Generate(context.Background(), nil)
	h4, _ := Hash(b, map[string]int{"seed": 1})
	if h1 != h2 || h1 == h3 || h1 == h4 {
		t.Fatalf("hash identity broken: %s %s %s %s", h1, h2, h3, h4)
	}
}

func TestSaveAndReplay(t *testing.T) {
	s := Synthetic{Count: 4, InputTokens: 16, OutputTokens: 8, Seed: 1, Chat: true}
	a, _, _ := s.Generate(context.Background(), nil)
	p := filepath.Join(t.TempDir(), "w.jsonl")
	if err := Save(p, a); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(p, 99)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := Hash(a, nil)
	h2, _ := Hash(b, nil)
	if h1 != h2 {
		t.Fatal("a saved workload read back hashes differently")
	}
}

func TestReadFileErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"prompt": "a"}` + "\n" + `{"prompt": `, "p.jsonl:2: invalid JSON"},
		{`{"prompt": "a"}` + "\n\n" + `{"x": 1}`, `p.jsonl:3: need "prompt" or "messages"`},
		{``, "no prompts"},
	} {
		_, err := Read(strings.NewReader(tc.body), "p.jsonl", 10)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%q) = %v, want error containing %q", tc.body, err, tc.want)
		}
	}
	reqs, err := Read(strings.NewReader(`{"prompt":"a","output_tokens":5}`+"\n"+`{"messages":[{"role":"user","content":"b"}]}`), "p", 10)
	if err != nil || len(reqs) != 2 || reqs[0].OutputTokens != 5 || reqs[1].OutputTokens != 10 || reqs[1].Messages[0].Content != "b" {
		t.Fatalf("Read = %+v, %v", reqs, err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing"), 1); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
