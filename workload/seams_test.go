package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"servebench/internal/peertest"
)

// seamTokenizer is newlineTokenizer where a word right after a newline costs one token more,
// as llama.cpp's SentencePiece tokenizers split a word without its leading "▁" (the start of
// a text gets one; a word after a newline does not) into more pieces: a block's text counts
// one token more after another block than alone.
func seamTokenizer() Tokenizer {
	base := newlineTokenizer()
	return TokenizerFunc(func(ctx context.Context, text string) (int, error) {
		n, err := base.Count(ctx, text)
		for i := 1; i < len(text); i++ {
			if text[i-1] == '\n' && text[i] != ' ' && text[i] != '\n' {
				n++
			}
		}
		return n, err
	})
}

// llamaTokenizer counts with a llama.cpp server's /tokenize, without special tokens, as run
// does (client.Tokenize, which this package cannot import).
func llamaTokenizer(url string) Tokenizer {
	return TokenizerFunc(func(ctx context.Context, text string) (int, error) {
		body, _ := json.Marshal(map[string]any{"content": text, "add_special": false})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/tokenize", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var out struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("tokenize: %d %v", resp.StatusCode, err)
		}
		return len(out.Tokens), nil
	})
}

// seamsTrace chains its ids as Mooncake's and capture's traces do; rows 1 and 4 end on a
// whole block, which rows 2 and 3 go on past.
const seamsTrace = `{"timestamp": 0, "input_length": 40, "output_length": 1, "hash_ids": [1, 2, 3]}
{"timestamp": 1, "input_length": 48, "output_length": 1, "hash_ids": [1, 2, 4]}
{"timestamp": 2, "input_length": 60, "output_length": 1, "hash_ids": [1, 2, 4, 5]}
{"timestamp": 3, "input_length": 71, "output_length": 1, "hash_ids": [1, 2, 4, 5, 6]}
{"timestamp": 4, "input_length": 32, "output_length": 1, "hash_ids": [1, 2]}
{"timestamp": 5, "input_length": 10, "output_length": 1, "hash_ids": [1]}
{"timestamp": 6, "input_length": 20, "output_length": 1, "hash_ids": [7, 8]}
`

// TestMooncakeSeams: blocks joined count exactly BlockTokens each, where the tokenizer counts
// a block otherwise after another than alone (a fake one that does, and llama.cpp's own
// /tokenize where the peer runs): every prompt's first j whole blocks are j·16 tokens, every
// prompt its input_length, and rows that share hash ids share their text.
func TestMooncakeSeams(t *testing.T) {
	t.Run("seam tokenizer", func(t *testing.T) { checkSeams(t, seamTokenizer()) })
	t.Run("llama.cpp", func(t *testing.T) {
		url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "1", "-c", "512")
		checkSeams(t, llamaTokenizer(url))
	})
}

func checkSeams(t *testing.T, tok Tokenizer) {
	ctx := context.Background()
	const block = 16
	m := Mooncake{BlockTokens: block, Seed: 3}
	tr, err := m.Read(ctx, strings.NewReader(seamsTrace), "seams.jsonl", tok)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Exact {
		t.Error("not exact")
	}
	count := func(s string) int {
		n, err := tok.Count(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// blocks[id] is the text up to and including block id, as the first row with it built it
	blocks := map[int]string{}
	for i, r := range tr.Requests {
		p := r.Prompt
		if n := count(p); n != r.InputTokens || n != []int{40, 48, 60, 71, 32, 10, 20}[i] {
			t.Errorf("request %d: %d tokens, InputTokens %d", i, n, r.InputTokens)
		}
		whole := min(len(r.HashIDs), r.InputTokens/block)
		end := 0
		for j, id := range r.HashIDs[:whole] {
			end += strings.IndexByte(p[end:], '\n') + 1
			if n := count(p[:end]); n != (j+1)*block {
				t.Errorf("request %d: its first %d blocks are %d tokens, want %d", i, j+1, n, (j+1)*block)
			}
			if prev, ok := blocks[id]; ok && prev != p[:end] {
				t.Errorf("request %d: block %d's text is not the one an earlier request has", i, id)
			}
			blocks[id] = p[:end]
		}
	}
	if !strings.HasPrefix(tr.Requests[2].Prompt, tr.Requests[1].Prompt) {
		t.Error("request 1 ends on block 4's whole text, and request 2 goes on past it: request 1 is not a prefix of request 2")
	}
}

// TestMooncakeMissed: prompts a tokenizer measured but could not build to their length are
// counted (here a newline costs 20 tokens, more than a 16-token block, so a prompt of whole
// blocks is too long), and none are without a tokenizer, where every length is approximate.
func TestMooncakeMissed(t *testing.T) {
	ctx := context.Background()
	base := newlineTokenizer()
	costly := TokenizerFunc(func(ctx context.Context, text string) (int, error) {
		n, err := base.Count(ctx, text)
		return n + 19*strings.Count(text, "\n"), err
	})
	want := []int{40, 48, 60, 71, 32, 10, 20}
	for _, tok := range []Tokenizer{costly, nil} {
		tr, err := (&Mooncake{BlockTokens: 16, Seed: 3}).Read(ctx, strings.NewReader(seamsTrace), "seams.jsonl", tok)
		if err != nil {
			t.Fatal(err)
		}
		missed := 0
		for i, r := range tr.Requests {
			if n, _ := costly.Count(ctx, r.Prompt); tok != nil && n != want[i] {
				missed++
			}
		}
		if tr.Exact || tr.Missed != missed || (tok != nil && missed == 0) {
			t.Errorf("tokenizer %v: exact %v, missed %d; want false, %d (and some)", tok != nil, tr.Exact, tr.Missed, missed)
		}
	}
}
