// Package tokenizer counts tokens locally with a Hugging Face tokenizer.json, so that a
// workload's prompt lengths can be exact against servers that have no tokenize endpoint
// (Ollama, Triton) or without asking the server at all (--tokenizer FILE).
//
// It implements the parts of the `tokenizers` library that real LLM tokenizers use: a BPE
// model (byte-level as in GPT-2, Llama 3 and Qwen, or with byte fallback as in Llama 2 and
// Mistral), the normalizers those files name (Prepend, Replace, NFC/NFKC, Lowercase,
// Sequence), and the pre-tokenizers (ByteLevel, Split with the models' regexes, Metaspace,
// Digits, Sequence). The regexes use lookahead (`\s+(?!\S)`), which Go's regexp (RE2) cannot
// express, so they run on github.com/dlclark/regexp2. Anything else in a file is refused
// with an error naming it, rather than counted wrongly.
//
// Counts never include special tokens (no BOS): prompt lengths then mean the same thing as
// client.Tokenize's, which asks servers for add_special=false.
package tokenizer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Tokenizer encodes text to token ids. It is safe for concurrent use.
type Tokenizer struct {
	norm  normalizer
	pre   []preTokenizer
	model *bpe
	added []addedToken // longest content first

	mu    sync.Mutex
	cache map[string][]int // word → ids: prompts repeat words, and BPE is the slow part
}

// addedToken is a token matched in the raw text before any other step.
type addedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
}

// file is the subset of tokenizer.json that is read.
type file struct {
	AddedTokens  []addedToken    `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// MaxFileBytes bounds a tokenizer.json file: the largest vocabularies' files are tens of
// megabytes, and a path to /dev/zero or an endless pipe must be an error, not a read until
// memory runs out.
const MaxFileBytes = 128 << 20

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	// a tokenizer.json is a JSON object: anything else (/dev/zero, a binary) is refused at its
	// first byte rather than after the whole bound is read
	for {
		c, err := br.ReadByte()
		if err != nil || c == '{' {
			_ = br.UnreadByte()
			break
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != 0xEF && c != 0xBB && c != 0xBF {
			return nil, fmt.Errorf("tokenizer %s: not a JSON object (a tokenizer.json)", path)
		}
	}
	b, err := io.ReadAll(io.LimitReader(br, MaxFileBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("tokenizer: read %s: %w", path, err)
	case len(b) > MaxFileBytes:
		return nil, fmt.Errorf("tokenizer %s: larger than %d MiB: not a tokenizer.json", path, MaxFileBytes>>20)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return t, nil
}

// Parse builds a Tokenizer from the contents of a tokenizer.json file.
func Parse(b []byte) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	t := &Tokenizer{cache: make(map[string][]int)}
	var err error
	if t.norm, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if t.model, err = parseBPE(f.Model); err != nil {
		return nil, err
	}
	for _, a := range f.AddedTokens {
		if a.Content != "" {
			t.added = append(t.added, a)
		}
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].Content) > len(t.added[j].Content) })
	return t, nil
}

// Encode returns the token ids of text, without special tokens added.
func (t *Tokenizer) Encode(text string) []int {
	var ids []int
	for text != "" {
		i, a := t.nextAdded(text)
		ids = t.encodeSegment(ids, text[:i])
		if a == nil {
			break
		}
		ids = append(ids, a.ID)
		text = text[i+len(a.Content):]
	}
	return ids
}

// Count returns the number of tokens of text. Its signature is workload.Tokenizer's.
func (t *Tokenizer) Count(_ context.Context, text string) (int, error) {
	return len(t.Encode(text)), nil
}

// nextAdded finds the first added token in text, preferring the longest at a position.
func (t *Tokenizer) nextAdded(text string) (int, *addedToken) {
	best, at := -1, (*addedToken)(nil)
	for k := range t.added {
		a := &t.added[k]
		if i := strings.Index(text, a.Content); i >= 0 && (best < 0 || i < best) {
			best, at = i, a
		}
	}
	if at == nil {
		return len(text), nil
	}
	return best, at
}

// encodeSegment normalizes, pre-tokenizes and BPE-encodes text (free of added tokens).
func (t *Tokenizer) encodeSegment(ids []int, text string) []int {
	if text == "" {
		return ids
	}
	pieces := []string{t.norm.apply(text)}
	for _, p := range t.pre {
		pieces = p.split(pieces)
	}
	for _, w := range pieces {
		ids = append(ids, t.word(w)...)
	}
	return ids
}

// maxCache bounds the word cache; past it the cache is simply cleared.
const maxCache = 1 << 16

// word encodes one pre-tokenized piece, through the cache.
func (t *Tokenizer) word(w string) []int {
	t.mu.Lock()
	ids, ok := t.cache[w]
	t.mu.Unlock()
	if ok {
		return ids
	}
	ids = t.model.encode(w)
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[w] = ids
	t.mu.Unlock()
	return ids
}
