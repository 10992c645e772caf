package tokenizer

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"strings"
)

// bpe is tokenizers' BPE model. Merges are kept by token-id pair, as tokenizers does: a
// merge whose parts or result are not in the vocabulary can never apply and is dropped.
type bpe struct {
	vocab        map[string]int
	merges       map[[2]int]merge
	byteFallback bool
	ignoreMerges bool // a word that is itself in the vocabulary is one token (Llama 3)
	unk          int  // -1: no unknown token (unknown characters are dropped)
	fuseUnk      bool
	byteIDs      [256]int // <0xXX> tokens for byte fallback; -1 when absent
}

// merge is the rank (lower applies first) and result of merging a pair.
type merge struct{ rank, id int }

// parseBPE builds the model of a "model" value.
func parseBPE(raw json.RawMessage) (*bpe, error) {
	var kind struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if kind.Type != "BPE" && kind.Type != "" {
		return nil, fmt.Errorf("unsupported model %q (only BPE)", kind.Type)
	}
	var m struct {
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		ByteFallback bool              `json:"byte_fallback"`
		IgnoreMerges bool              `json:"ignore_merges"`
		UnkToken     *string           `json:"unk_token"`
		FuseUnk      bool              `json:"fuse_unk"`
		Prefix       *string           `json:"continuing_subword_prefix"`
		Suffix       *string           `json:"end_of_word_suffix"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if m.Vocab == nil {
		return nil, fmt.Errorf("model has no vocab")
	}
	if (m.Prefix != nil && *m.Prefix != "") || (m.Suffix != nil && *m.Suffix != "") {
		return nil, fmt.Errorf("unsupported BPE subword prefix/suffix")
	}
	b := &bpe{vocab: m.Vocab, merges: make(map[[2]int]merge, len(m.Merges)), byteFallback: m.ByteFallback,
		ignoreMerges: m.IgnoreMerges, unk: -1, fuseUnk: m.FuseUnk}
	if m.UnkToken != nil {
		if id, ok := m.Vocab[*m.UnkToken]; ok {
			b.unk = id
		}
	}
	for i := range b.byteIDs {
		id, ok := m.Vocab[fmt.Sprintf("<0x%02X>", i)]
		b.byteIDs[i] = map[bool]int{true: id, false: -1}[ok]
	}
	for rank, r := range m.Merges {
		l, rt, err := mergeParts(r)
		if err != nil {
			return nil, fmt.Errorf("merge %d: %w", rank, err)
		}
		li, ok1 := b.vocab[l]
		ri, ok2 := b.vocab[rt]
		res, ok3 := b.vocab[l+rt]
		if _, dup := b.merges[[2]int{li, ri}]; ok1 && ok2 && ok3 && !dup {
			b.merges[[2]int{li, ri}] = merge{rank: rank, id: res}
		}
	}
	return b, nil
}

// mergeParts reads a merge in either of its forms: "a b" (older files) or ["a", "b"].
func mergeParts(r json.RawMessage) (string, string, error) {
	var s string
	if json.Unmarshal(r, &s) == nil {
		l, rt, ok := strings.Cut(s, " ")
		if !ok {
			return "", "", fmt.Errorf("%q is not two parts", s)
		}
		return l, rt, nil
	}
	var pair []string
	if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 {
		return "", "", fmt.Errorf("%s is not two parts", r)
	}
	return pair[0], pair[1], nil
}

// symbol is one node of the word being merged, in a doubly linked list over a slice.
type symbol struct {
	id         int
	prev, next int // -1 at the ends
	dead       bool
}

// encode applies the merges to one word: start from its characters (unknown ones through
// byte fallback or the unknown token), then repeatedly merge the adjacent pair of lowest
// rank, leftmost first. A heap of candidate pairs makes this O(n log n) for an n-character
// word; a pre_tokenizer of null (SentencePiece-style files) makes the whole text one word,
// where the naive O(n²) loop was too slow for long prompts.
func (b *bpe) encode(w string) []int {
	if id, ok := b.vocab[w]; ok && b.ignoreMerges {
		return []int{id}
	}
	syms := b.initial(w)
	h := &pairHeap{}
	for i := 0; i+1 < len(syms); i++ {
		b.push(h, syms, i)
	}
	for h.Len() > 0 {
		p := heap.Pop(h).(pair)
		l := &syms[p.left]
		if l.dead || l.next != p.right || syms[p.right].dead || l.id != p.lid || syms[p.right].id != p.rid {
			continue // stale: one side was merged since this pair was pushed
		}
		r := &syms[p.right]
		l.id, r.dead, l.next = p.id, true, r.next
		if r.next >= 0 {
			syms[r.next].prev = p.left
		}
		if l.prev >= 0 {
			b.push(h, syms, l.prev)
		}
		b.push(h, syms, p.left)
	}
	ids := make([]int, 0, len(syms))
	for i := range syms {
		if !syms[i].dead {
			ids = append(ids, syms[i].id)
		}
	}
	return ids
}

// initial returns the symbols of w's characters, linked.
func (b *bpe) initial(w string) []symbol {
	syms := make([]symbol, 0, len(w))
	add := func(id int) {
		n := len(syms)
		syms = append(syms, symbol{id: id, prev: n - 1, next: -1})
		if n > 0 {
			syms[n-1].next = n
		}
	}
	for _, r := range w {
		c := string(r)
		if id, ok := b.vocab[c]; ok {
			add(id)
			continue
		}
		if b.byteFallback && b.hasBytes(c) {
			for i := 0; i < len(c); i++ {
				add(b.byteIDs[c[i]])
			}
			continue
		}
		if b.unk >= 0 && !(b.fuseUnk && len(syms) > 0 && syms[len(syms)-1].id == b.unk) {
			add(b.unk)
		}
	}
	return syms
}

// hasBytes reports whether every byte of c has a <0xXX> token.
func (b *bpe) hasBytes(c string) bool {
	for i := 0; i < len(c); i++ {
		if b.byteIDs[c[i]] < 0 {
			return false
		}
	}
	return true
}

// push adds the pair starting at symbol i when it has a merge.
func (b *bpe) push(h *pairHeap, syms []symbol, i int) {
	j := syms[i].next
	if j < 0 {
		return
	}
	if m, ok := b.merges[[2]int{syms[i].id, syms[j].id}]; ok {
		heap.Push(h, pair{rank: m.rank, left: i, right: j, lid: syms[i].id, rid: syms[j].id, id: m.id})
	}
}

// pair is a candidate merge of two adjacent symbols.
type pair struct {
	rank, left, right int
	lid, rid, id      int
}

// pairHeap orders candidates by rank, then position (leftmost first).
type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].left < h[j].left
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
