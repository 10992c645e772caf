package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"servebench/internal/peertest"
)

// TestAgreesWithLlamaCpp builds a tokenizer.json from tiny.gguf's own vocabulary (a
// SentencePiece-style vocabulary with scores, converted as Hugging Face's LlamaConverter
// does: BPE with byte fallback, merges ranked by the merged piece's score, "▁" for spaces)
// and checks that it splits texts exactly as the llama.cpp server's /tokenize does.
func TestAgreesWithLlamaCpp(t *testing.T) {
	url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "1", "-c", "512")
	dir, _ := peertest.PeersDir()
	js := spmTokenizerJSON(t, filepath.Join(dir, "models", "tiny.gguf"))
	tk, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"hello the world", "  two  spaces", "Benchmark: latency, 42 ms!\nnew line", "naïve café ☕",
		"thethethe of-and", "University united states", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the of and to in is was server model fast slow hello token stream x y z 1 2 , . ! é")
	for range 40 { // random word salads
		var b strings.Builder
		for range 5 + rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString([]string{" ", "", "  ", "\n"}[rng.IntN(4)])
		}
		texts = append(texts, b.String())
	}
	agree := 0
	for _, text := range texts {
		want := serverTokens(t, url, text)
		got := tk.Encode(text)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			agree++
		} else {
			t.Errorf("%q:\n local  %v\n server %v", text, got, want)
		}
	}
	t.Logf("%d/%d texts tokenized identically", agree, len(texts))
}

// serverTokens asks llama.cpp for the ids of text without special tokens.
func serverTokens(t *testing.T, url, text string) []int {
	body, _ := json.Marshal(map[string]any{"content": text, "add_special": false})
	resp, err := http.Post(url+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Tokens []int }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Tokens == nil {
		out.Tokens = []int{}
	}
	return out.Tokens
}

// spmTokenizerJSON converts a GGUF's "llama" (SentencePiece) vocabulary to tokenizer.json.
func spmTokenizerJSON(t *testing.T, path string) []byte {
	t.Helper()
	kv := readGGUF(t, path, "tokenizer.ggml.tokens", "tokenizer.ggml.scores")
	pieces, _ := kv["tokenizer.ggml.tokens"].([]any)
	scores, _ := kv["tokenizer.ggml.scores"].([]any)
	if len(pieces) == 0 || len(pieces) != len(scores) {
		t.Fatalf("%s: %d tokens, %d scores", path, len(pieces), len(scores))
	}
	vocab := map[string]int{}
	for i, p := range pieces {
		vocab[p.(string)] = i
	}
	type m struct {
		l, r  string
		score float32
		id    int
	}
	var merges []m
	for id, p := range pieces {
		s := p.(string)
		for i := 1; i < len(s); i++ {
			if !utf8.RuneStart(s[i]) {
				continue
			}
			if _, ok := vocab[s[:i]]; !ok {
				continue
			}
			if _, ok := vocab[s[i:]]; ok {
				merges = append(merges, m{s[:i], s[i:], scores[id].(float32), id})
			}
		}
	}
	sort.SliceStable(merges, func(i, j int) bool { return merges[i].score > merges[j].score })
	ms := make([][2]string, len(merges))
	for i, x := range merges {
		ms[i] = [2]string{x.l, x.r}
	}
	f := map[string]any{
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}}},
		"pre_tokenizer": nil,
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": ms, "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>"},
	}
	b, _ := json.Marshal(f)
	return b
}

// readGGUF reads the wanted metadata keys of a GGUF file (format v2/v3: little-endian;
// a header, then typed key/value pairs).
func readGGUF(t *testing.T, path string, want ...string) map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no model file: %v", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var hdr struct {
		Magic   [4]byte
		Version uint32
		Tensors uint64
		KVs     uint64
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil || string(hdr.Magic[:]) != "GGUF" {
		t.Fatalf("%s: not a GGUF file (%v)", path, err)
	}
	out := map[string]any{}
	for range hdr.KVs {
		key := ggufString(r)
		var typ uint32
		binary.Read(r, binary.LittleEndian, &typ)
		v := ggufValue(t, r, typ)
		for _, w := range want {
			if key == w {
				out[key] = v
			}
		}
	}
	return out
}

func ggufString(r io.Reader) string {
	var n uint64
	binary.Read(r, binary.LittleEndian, &n)
	b := make([]byte, n)
	io.ReadFull(r, b)
	return string(b)
}

// ggufValue reads one value of GGUF type typ.
func ggufValue(t *testing.T, r io.Reader, typ uint32) any {
	read := func(v any) any { binary.Read(r, binary.LittleEndian, v); return v }
	switch typ {
	case 0, 7:
		return *read(new(uint8)).(*uint8)
	case 1:
		return *read(new(int8)).(*int8)
	case 2:
		return *read(new(uint16)).(*uint16)
	case 3:
		return *read(new(int16)).(*int16)
	case 4:
		return *read(new(uint32)).(*uint32)
	case 5:
		return *read(new(int32)).(*int32)
	case 6:
		return *read(new(float32)).(*float32)
	case 8:
		return ggufString(r)
	case 9:
		var et uint32
		var n uint64
		binary.Read(r, binary.LittleEndian, &et)
		binary.Read(r, binary.LittleEndian, &n)
		a := make([]any, n)
		for i := range a {
			a[i] = ggufValue(t, r, et)
		}
		return a
	case 10:
		return *read(new(uint64)).(*uint64)
	case 11:
		return *read(new(int64)).(*int64)
	case 12:
		return *read(new(float64)).(*float64)
	}
	t.Fatalf("GGUF value type %d", typ)
	return nil
}
