package tokenizer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

// TestGPT2Split checks the lookahead rule RE2 cannot express: in a run of spaces, the last
// one goes with the next word.
func TestGPT2Split(t *testing.T) {
	re := regexp2.MustCompile(gpt2Pattern, regexp2.Unicode)
	for in, want := range map[string]string{
		"the  cat's 123\n":  `the| | cat|'s| 123|\n`,
		"Hello,   world!! ": `Hello|,|  | world|!!| `,
		"naïve café 42x":    `naïve| café| 42|x`,
	} {
		got := strings.Join(splitRegex(nil, in, re, "Isolated"), "|")
		if got != strings.ReplaceAll(want, `\n`, "\n") {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestLlama3Split checks Llama 3's Split regex (case-insensitive contractions, digits in
// groups of at most three, a letter run with one leading non-letter).
func TestLlama3Split(t *testing.T) {
	const llama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	re := regexp2.MustCompile(llama3, regexp2.Unicode)
	got := strings.Join(splitRegex(nil, "I'M 12345 tokens\n\n  ok", re, "Isolated"), "|")
	if want := "I|'M| |123|45| tokens|\n\n| | ok"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestByteLevelBPE encodes with testdata/bytelevel-bpe.json, a GPT-2-style file built for
// this test (see the expected merges by hand in the comments).
func TestByteLevelBPE(t *testing.T) {
	tk, err := Load("testdata/bytelevel-bpe.json")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"the cat":           "t he Ġcat",              // t,h,e → t,he (the merge is "Ġt he", not "t he"); " cat" → Ġcat
		"hello world":       "he ll o Ġworld",         // h+e (rank 1) and l+l apply first, so e+ll never can; Ġwor+ld
		"the  cat's 123":    "t he Ġ Ġcat 's Ġ 123",   // a lone space stays Ġ; 1+2 and 12+3 outrank Ġ+1
		"é<|endoftext|>the": "Ã © <|endoftext|> t he", // é is two bytes; the added token is matched first
	} {
		var pieces []string
		for _, id := range tk.Encode(in) {
			pieces = append(pieces, tk.piece(id))
		}
		if got := strings.Join(pieces, " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	n, _ := tk.Count(context.Background(), "hello world")
	if n != 4 {
		t.Errorf("Count = %d", n)
	}
}

// piece returns the vocabulary entry of id, for test messages.
func (t *Tokenizer) piece(id int) string {
	for k, v := range t.model.vocab {
		if v == id {
			return k
		}
	}
	for _, a := range t.added {
		if a.ID == id {
			return a.Content
		}
	}
	return fmt.Sprint("#", id)
}

func TestUnsupportedIsAnError(t *testing.T) {
	for _, s := range []string{
		`{"model":{"type":"WordPiece","vocab":{}}}`,
		`{"normalizer":{"type":"BertNormalizer"},"model":{"type":"BPE","vocab":{},"merges":[]}}`,
		`{"pre_tokenizer":{"type":"Whitespace"},"model":{"type":"BPE","vocab":{},"merges":[]}}`,
	} {
		if _, err := Parse([]byte(s)); err == nil || !strings.Contains(err.Error(), "unsupported") {
			t.Errorf("%s: err %v", s, err)
		}
	}
}

func TestMetaspaceAndDigits(t *testing.T) {
	m := &metaspace{repl: "▁", scheme: "always", splitOn: true}
	if got := strings.Join(m.split([]string{"hello big world"}), "|"); got != "▁hello|▁big|▁world" {
		t.Errorf("metaspace %q", got)
	}
	if got := strings.Join(digits(true).split([]string{"ab12c"}), "|"); got != "ab|1|2|c" {
		t.Errorf("digits %q", got)
	}
	if got := strings.Join(digits(false).split([]string{"ab12c"}), "|"); got != "ab|12|c" {
		t.Errorf("digits %q", got)
	}
}
