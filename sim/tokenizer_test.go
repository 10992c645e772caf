package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestCountTokens(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"   \n\t", 0},
		{"the cat sat.", 4},
		{"Hello, world!", 4},
		{"abcdefgh", 1},  // 8 characters: one token
		{"abcdefghi", 3}, // 9 characters: abcd efgh i
		{"internationalization", 5},
		{"naïve café", 2}, // letters beyond ASCII are letters
		{"日本語のテキスト", 1},   // 8 letters: one word
		{"x=1+2", 5},
		{words(100), 100},
	} {
		if got := countTokens(tc.text); got != tc.want {
			t.Errorf("countTokens(%q) = %d, want %d", tc.text, got, tc.want)
		}
		if got := len(newTokenizer().encode(tc.text)); got != tc.want {
			t.Errorf("len(encode(%q)) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestTokenizeRoundTrip(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	tk := newTokenizer()
	for _, text := range []string{
		"the quick brown fox, jumps over: the lazy dog.",
		"internationalization of naïve (text) with numbers 12345678901 and symbols $ % &",
		words(64),
	} {
		ids := tk.encode(text)
		back, err := tk.decode(ids)
		if err != nil || back != text {
			t.Errorf("round trip of %q = %q (err %v)", text, back, err)
		}
	}
	if _, err := tk.decode([]int{1 << 40}); err == nil {
		t.Error("decode of an id never produced by encode succeeded")
	}
	// Every output word is one token on its own, so output text re-tokenizes exactly.
	for i, w := range outputPieces {
		if countTokens(w) != 1 {
			t.Errorf("vocab[%d] %q is %d tokens", i, w, countTokens(w))
		}
	}
}

func TestTokenizeHTTP(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(time.Millisecond, time.Millisecond))
	type tokOut struct {
		Tokens      []int `json:"tokens"`
		Count       int   `json:"count"`
		MaxModelLen int   `json:"max_model_len"`
	}
	tokenize := func(body map[string]any) tokOut {
		resp := post(t, base+"/tokenize", body)
		defer resp.Body.Close()
		var out tokOut
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("/tokenize %v: status %d, %v", body, resp.StatusCode, err)
		}
		return out
	}
	// Simu·late·d servers , pred·icta·bly toke·nize·d . = 12 tokens (words over 8 letters split every 4).
	text := "Simulated servers, predictably tokenized."
	a := tokenize(map[string]any{"prompt": text})
	b := tokenize(map[string]any{"content": text})
	c := tokenize(map[string]any{"messages": []map[string]string{{"role": "system", "content": "Simulated servers,"}, {"role": "user", "content": "predictably tokenized."}}})
	if a.Count != 12 || len(a.Tokens) != 12 || b.Count != 12 || c.Count != 12 || a.MaxModelLen != 131072 {
		t.Fatalf("counts %d/%d/%d (len %d), max_model_len %d; want 12 and 131072", a.Count, b.Count, c.Count, len(a.Tokens), a.MaxModelLen)
	}
	resp := post(t, base+"/detokenize", map[string]any{"tokens": a.Tokens})
	var back struct {
		Prompt string `json:"prompt"`
	}
	json.NewDecoder(resp.Body).Decode(&back)
	resp.Body.Close()
	if back.Prompt != text {
		t.Errorf("detokenize = %q, want %q", back.Prompt, text)
	}
	// The prompt tokens the engine charges are the tokenizer's count.
	resp = post(t, base+"/v1/completions", map[string]any{"prompt": strings.Repeat(text+" ", 3), "max_tokens": 1})
	var out struct {
		Usage struct {
			Prompt int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if out.Usage.Prompt != 36 {
		t.Errorf("usage.prompt_tokens = %d, want 36", out.Usage.Prompt)
	}
}

func FuzzTokenizeRoundTrip(f *testing.F) {
	f.Add("the cat sat.")
	f.Add("internationalization, naïve")
	f.Fuzz(func(t *testing.T, s string) {
		tk := newTokenizer()
		ids := tk.encode(s)
		if len(ids) != countTokens(s) {
			t.Fatalf("encode gives %d ids, count %d", len(ids), countTokens(s))
		}
		back, err := tk.decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if countTokens(back) != len(ids) {
			t.Fatalf("detokenized %q has %d tokens, want %d", back, countTokens(back), len(ids))
		}
	})
}
