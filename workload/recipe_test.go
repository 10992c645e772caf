package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// charTokens is a cheap tokenizer: one token per four bytes, rounded up. Word prefixes then
// rarely land on the exact length, so the builder pads, and recipes carry pads.
var charTokens = TokenizerFunc(func(_ context.Context, text string) (int, error) { return (len(text) + 3) / 4, nil })

func encoded(t *testing.T, reqs []Request) string {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, reqs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// recipeOf is the header recipe of reqs, which must have one.
func recipeOf(t *testing.T, reqs []Request) *HeaderRecipe {
	t.Helper()
	sha, err := EncodedSHA256(reqs)
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := RecipeOf(reqs, sha)
	if !ok {
		t.Fatal("no recipe")
	}
	return rc
}

// Hashes is Hash and EncodedSHA256 in one pass.
func TestHashesOnePass(t *testing.T) {
	s := Synthetic{Count: 10, InputTokens: 50, OutputTokens: 5, Seed: 2, Lazy: true}
	reqs, _, err := s.Generate(context.Background(), charTokens)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]int{"x": 1}
	h, all, err := Hashes(reqs, 4, settings)
	if err != nil {
		t.Fatal(err)
	}
	wantH, _ := Hash(reqs[:4], settings)
	wantAll, _ := EncodedSHA256(reqs)
	if h != wantH || all != wantAll {
		t.Errorf("Hashes = %s, %s; want %s, %s", h, all, wantH, wantAll)
	}
}

// A workload that keeps its text can still be carried as recipes.
func TestRecipesBesideText(t *testing.T) {
	s := Synthetic{Count: 12, InputTokens: 80, OutputTokens: 5, Seed: 4, Recipes: true}
	reqs, _, err := s.Generate(context.Background(), charTokens)
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].Lazy() || reqs[0].Prompt == "" || reqs[0].Materialize() != &reqs[0] {
		t.Fatal("a request with recipes kept is not its text")
	}
	back, err := recipeOf(t, reqs).Requests()
	if err != nil {
		t.Fatal(err)
	}
	if encoded(t, back) != encoded(t, reqs) {
		t.Fatal("the rebuilt workload differs")
	}
}

// A lazy workload is the same workload: every request rebuilds the text the eager build made.
func TestLazyMatchesText(t *testing.T) {
	for _, tc := range []struct {
		name string
		tok  Tokenizer
		chat bool
	}{{"tokenizer", charTokens, false}, {"chat", charTokens, true}, {"approximate", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := Synthetic{Count: 40, First: 7, InputTokens: 300, OutputTokens: 20, RangeRatio: 0.4, Seed: 3, Chat: tc.chat}
			eager, exE, err := s.Generate(context.Background(), tc.tok)
			if err != nil {
				t.Fatal(err)
			}
			s.Lazy = true
			lazy, exL, err := s.Generate(context.Background(), tc.tok)
			if err != nil {
				t.Fatal(err)
			}
			if exE != exL {
				t.Fatalf("exact %v lazy, %v eager", exL, exE)
			}
			for i := range lazy {
				if !lazy[i].Lazy() || lazy[i].Prompt != "" || lazy[i].Messages != nil {
					t.Fatalf("request %d holds its text", i)
				}
			}
			if e, l := encoded(t, eager), encoded(t, lazy); e != l {
				t.Fatalf("lazy workload differs from the eager one")
			}
			if m := lazy[0].Materialize(); m.Lazy() || (m.Prompt == "" && m.Messages == nil) {
				t.Fatalf("materialized request has no text: %+v", m)
			}
		})
	}
}

// A header recipe survives JSON and rebuilds exactly the requests it was made of.
func TestRecipeRoundTrip(t *testing.T) {
	a := Synthetic{Count: 30, InputTokens: 200, OutputTokens: 10, RangeRatio: 0.2, Seed: 9, Lazy: true}
	b := a
	b.First, b.Count = 30, 20 // a second part of the same stream: one segment with the first
	c := Synthetic{Count: 5, InputTokens: 50, OutputTokens: 4, Seed: 11, Chat: true, Lazy: true}
	var reqs []Request
	for _, s := range []Synthetic{a, b, c} {
		rs, _, err := s.Generate(context.Background(), charTokens)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, rs...)
	}
	rc := recipeOf(t, reqs)
	if len(rc.Segments) != 2 {
		t.Fatalf("%d segments, want 2 (consecutive indices of one stream merge)", len(rc.Segments))
	}
	raw, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	var back HeaderRecipe
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if encoded(t, got) != encoded(t, reqs) {
		t.Fatal("the rebuilt workload differs")
	}
	for i := range got {
		if got[i].ID != i {
			t.Fatalf("request %d has ID %d", i, got[i].ID)
		}
	}
}

// A recipe that does not rebuild its hash is refused, as is a damaged one.
func TestRecipeRefusesMismatch(t *testing.T) {
	s := Synthetic{Count: 8, InputTokens: 100, OutputTokens: 5, Seed: 1, Lazy: true}
	reqs, _, err := s.Generate(context.Background(), charTokens)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*HeaderRecipe)
	}{
		{"words", "hash to", func(rc *HeaderRecipe) { rc.Segments[0].Words[3]-- }},
		{"seed", "hash to", func(rc *HeaderRecipe) { rc.Segments[0].Seed++ }},
		{"generator", "generator", func(rc *HeaderRecipe) { rc.Generator = "words/0" }},
		{"count", "count", func(rc *HeaderRecipe) { rc.Count++ }},
		{"too many words", "keeps", func(rc *HeaderRecipe) { rc.Segments[0].Words[0] = 1 << 30 }},
		{"pad out of range", "pad", func(rc *HeaderRecipe) { rc.Segments[0].Pads = map[int]string{99: "x"} }},
		{"huge length", "tokens", func(rc *HeaderRecipe) { rc.Segments[0].InputTokens = 1 << 30 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := recipeOf(t, reqs)
			tc.edit(rc)
			if _, err := rc.Requests(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one with %q", err, tc.want)
			}
		})
	}
}

// The long-context case: 1,000 prompts of 128k tokens, built to exact lengths,
// fit a header recipe of a few KB (their text is about 670 MB; the recipe measured 9,703
// bytes). Building 670 MB of prompts takes a minute on a busy machine, so by default the
// prompts are 20k tokens: their word counts have as many digits as 128k tokens' (about 12k
// against 78k words), so the recipe is as large. SERVEBENCH_LONG_TEST=1 builds the full size.
func TestHeaderRecipeSizeLongContext(t *testing.T) {
	if raceEnabled {
		// Generate's workers run under the race detector in the other Synthetic tests
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine reads or builds hundreds of MB, many times the time under it")
	}
	n, in := 1000, 20000
	if os.Getenv("SERVEBENCH_LONG_TEST") == "1" {
		in = 128000
	} else if testing.Short() {
		in = 2000 // four-digit word counts: a smaller recipe, still bounded the same way
	}
	s := Synthetic{Count: n, InputTokens: in, OutputTokens: 16, Seed: 1, Lazy: true}
	reqs, exact, err := s.Generate(context.Background(), charTokens)
	if err != nil {
		t.Fatal(err)
	}
	if !exact {
		t.Fatal("the cheap tokenizer's prompts are not exact")
	}
	rc := recipeOf(t, reqs)
	raw, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 16<<10 {
		t.Fatalf("header recipe of %d prompts of %d tokens is %d bytes, want under 16 KiB", n, in, len(raw))
	}
	t.Logf("%d prompts of %d tokens: header recipe %d bytes", n, in, len(raw))
}

// BenchmarkMaterialize128k is the per-send cost of a lazy prompt of 128k tokens: rebuilding
// its text (compare with encoding it into a request body, which every send pays).
func BenchmarkMaterialize128k(b *testing.B) {
	s := Synthetic{Count: 1, InputTokens: 128000, OutputTokens: 16, Seed: 1, Lazy: true}
	reqs, _, err := s.Generate(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			reqs[0].Materialize()
		}
	})
	text := reqs[0].Materialize().Prompt
	b.Run("json-body", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(map[string]any{"prompt": text, "stream": true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
