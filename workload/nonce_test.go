package workload

import (
	"context"
	"strings"
	"testing"
)

// TestNonceTextOnly: a nonce changes every prompt's words and none of its lengths; no nonce
// is the seed's text as it always was; the header recipe of a nonced workload rebuilds its
// text exactly.
func TestNonceTextOnly(t *testing.T) {
	ctx := context.Background()
	gen := func(nonce uint64) []Request {
		t.Helper()
		s := Synthetic{Count: 50, InputTokens: 40, OutputTokens: 8, RangeRatio: 0.5, Seed: 1, Recipes: true, Nonce: nonce}
		reqs, _, err := s.Generate(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return reqs
	}
	plain, a, b := gen(0), gen(NewNonce()), gen(NewNonce())
	plain2 := gen(0)
	firstWords := map[string]bool{}
	for i := range plain {
		if plain[i].Prompt != plain2[i].Prompt {
			t.Fatalf("prompt %d: no nonce, yet the text changed between two builds", i)
		}
		for _, r := range []Request{a[i], b[i]} {
			if r.InputTokens != plain[i].InputTokens || r.OutputTokens != plain[i].OutputTokens {
				t.Errorf("prompt %d: lengths %d/%d with a nonce, %d/%d without", i, r.InputTokens, r.OutputTokens, plain[i].InputTokens, plain[i].OutputTokens)
			}
		}
		if a[i].Prompt == plain[i].Prompt || a[i].Prompt == b[i].Prompt {
			t.Errorf("prompt %d: the same text under two nonces", i)
		}
		// a prefix cache reuses a shared start: the first words must differ between nonces
		for _, r := range []Request{plain[i], a[i], b[i]} {
			w := strings.Join(strings.Fields(r.Prompt)[:3], " ")
			if firstWords[w] {
				t.Errorf("prompt %d starts like another one (%q)", i, w)
			}
			firstWords[w] = true
		}
	}
	sha, err := EncodedSHA256(a)
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := RecipeOf(a, sha)
	if !ok || rc.Segments[0].Nonce == "" {
		t.Fatalf("no recipe, or a recipe without its nonce: %+v", rc)
	}
	back, err := rc.Requests()
	if err != nil {
		t.Fatalf("rebuild from the recipe: %v", err)
	}
	for i := range back {
		if m := back[i].Materialize(); m.Prompt != a[i].Prompt {
			t.Fatalf("prompt %d rebuilt from the recipe differs", i)
		}
	}
	rc.Segments[0].Nonce = "0000000000000000"
	if _, err := rc.Requests(); err == nil {
		t.Error("a recipe with an all-zero nonce was accepted")
	}
}

// TestNonceFormat: a nonce round-trips through its header form; anything else is refused.
func TestNonceFormat(t *testing.T) {
	for range 100 {
		n := NewNonce()
		if got, err := ParseNonce(FormatNonce(n)); err != nil || got != n || n == 0 {
			t.Fatalf("%x: parsed back as %x, %v", n, got, err)
		}
	}
	if n, err := ParseNonce(""); n != 0 || err != nil {
		t.Errorf(`"" is no nonce: %x, %v`, n, err)
	}
	for _, bad := range []string{"abc", "0000000000000000", "zzzzzzzzzzzzzzzz", "00000000000000001", "-000000000000001"} {
		if _, err := ParseNonce(bad); err == nil {
			t.Errorf("%q accepted as a nonce", bad)
		}
	}
}

// TestNonceSharedPrefix: under a nonce the groups still share their prefixes within the
// workload, in the same order, and no prefix is another nonce's.
func TestNonceSharedPrefix(t *testing.T) {
	tok := newlineTokenizer()
	prefixes := func(nonce uint64) []string {
		t.Helper()
		s := SharedPrefix{Groups: 3, PerGroup: 4, PrefixTokens: 50, SuffixTokens: 20, OutputTokens: 8, Seed: 2, Order: OrderShuffled, Nonce: nonce}
		reqs, _, err := s.Generate(context.Background(), tok)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range reqs {
			out = append(out, r.Prompt[:strings.Index(r.Prompt, "\n")+1])
		}
		return out
	}
	plain, a := prefixes(0), prefixes(NewNonce())
	seen := map[string]bool{}
	for _, p := range plain {
		seen[p] = true
	}
	for i := range a {
		if seen[a[i]] {
			t.Errorf("request %d: its prefix is the one without a nonce", i)
		}
		for j := range i {
			if (a[i] == a[j]) != (plain[i] == plain[j]) {
				t.Errorf("requests %d and %d: shared %v under the nonce, %v without", j, i, a[i] == a[j], plain[i] == plain[j])
			}
		}
	}
}
