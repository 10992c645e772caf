package workload

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"strings"
)

// What a workload repeats by design. A prefix cache serves the part of a prompt that begins
// as a prompt the server saw before: a shared system prompt or document, a session's history
// sent again with every turn, a prompts file with the same prompt twice, a trace's hash ids,
// a set cycled by a long run. Those hits are the workload's, not a replay's, and the cache
// note in package metrics sets the server's cached tokens against them. Repeats computes it
// the same way for every source, from the text that is sent: the longest prefix each request
// shares with any request before it. The server's tokens of that prefix are estimated as the
// same share of its prompt tokens (docs/workloads.md, "What a workload repeats").

// repeatBlock is the text, in bytes, that the prefix index keys at a time: about 12 tokens of
// English, the scale of a server's cache block (vLLM's 16 tokens). A request matches whole
// blocks through the index, then byte by byte against the earlier request that holds them;
// another request that shares a few more bytes within the next block is missed, so a prefix
// can be short by less than a block. A beginning shorter than one block (a first phrase many
// texts share) is not counted: it is the opening metrics allows every request.
const repeatBlock = 64

// maxRepeatBlocks bounds the index of a large workload (a lazy one holds hundreds of MB of
// text as recipes): its block doubles until the text fits in about this many blocks, some 40
// MB of index. A longer block only lets a shorter beginning go uncounted, a smaller share of
// prompts that long.
const maxRepeatBlocks = 1 << 20

// Repeats returns, for each request in order, the share of its prompt text (0 to 1) that
// repeats the beginning of a request before it: the longest prefix it shares with any earlier
// one, to within a block (repeatBlock). Chat messages are compared as role and content in
// turn, a request to another LoRA adapter begins apart (a server keys its cache on the
// adapter), and media are left out. Lazy requests are rebuilt one at a time, so the index, a
// hash per block, is what stays in memory: O(total text) time, at most about maxRepeatBlocks
// hashes.
func Repeats(reqs []Request) []float64 {
	x := indexFor(reqs)
	out := make([]float64, len(reqs))
	for k := range reqs {
		out[k] = x.Add(&reqs[k])
	}
	return out
}

// RepeatIndex is Repeats one request at a time: the prefixes of the requests added so far.
// The zero value is not ready: use NewRepeatIndex.
type RepeatIndex struct {
	block  int // bytes a block
	seed   maphash.Seed
	blocks map[uint64]int // chained hash of a text's first b blocks → the first request with them
	whole  map[uint64]int // hash of a whole text → the first request with it
	texts  []*Request     // the requests added, to compare past the matched blocks
}

// NewRepeatIndex returns an empty index.
func NewRepeatIndex() *RepeatIndex {
	return &RepeatIndex{block: repeatBlock, seed: maphash.MakeSeed(), blocks: map[uint64]int{}, whole: map[uint64]int{}}
}

// indexFor is an empty index whose block suits the text of reqs (maxRepeatBlocks), estimated
// without rebuilding lazy prompts (TextBytes).
func indexFor(reqs []Request) *RepeatIndex {
	x := NewRepeatIndex()
	text := 0.0
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.Lazy():
			text += TextBytes(1, float64(r.InputTokens))
		default:
			text += float64(len(r.Prompt))
			for _, m := range r.Messages {
				text += float64(len(m.Content))
			}
		}
	}
	for text/float64(x.block) > maxRepeatBlocks {
		x.block *= 2
	}
	return x
}

// Add indexes r and returns the share of its text that begins as an earlier request's did.
func (x *RepeatIndex) Add(r *Request) float64 {
	matched, n := x.add(r)
	if n == 0 {
		return 0
	}
	return float64(matched) / float64(n)
}

// add indexes r and returns how many bytes of its text (repeatKey), of n, begin as an earlier
// request's did.
func (x *RepeatIndex) add(r *Request) (matched, n int) {
	k := len(x.texts)
	x.texts = append(x.texts, r)
	text := repeatKey(r.Materialize())
	if len(text) == 0 {
		return 0, 0
	}
	wh := maphash.String(x.seed, text)
	if _, ok := x.whole[wh]; ok {
		return len(text), len(text)
	}
	x.whole[wh] = k
	from := -1
	var h uint64
	var buf [8]byte
	bs := x.block
	for b := 0; (b+1)*bs <= len(text); b++ {
		binary.LittleEndian.PutUint64(buf[:], h)
		var mh maphash.Hash
		mh.SetSeed(x.seed)
		mh.Write(buf[:])
		mh.WriteString(text[b*bs : (b+1)*bs])
		h = mh.Sum64()
		j, ok := x.blocks[h]
		switch {
		case ok && matched == b*bs:
			matched, from = (b+1)*bs, j
		case !ok:
			x.blocks[h] = k
		}
	}
	if from >= 0 {
		earlier := repeatKey(x.texts[from].Materialize())
		for matched < len(text) && matched < len(earlier) && text[matched] == earlier[matched] {
			matched++
		}
	}
	return matched, len(text)
}

// CountRepeats is Repeats in tok's tokens where it can be: a request that is a plain prompt
// of known length (InputTokens, counted by tok) and repeats part of an earlier one has the
// tokens of that part, counted by tok, over its own; any other keeps its share of the text.
// Each distinct prefix is counted once, so prefix groups cost one count per group.
func CountRepeats(ctx context.Context, reqs []Request, tok Tokenizer) ([]float64, error) {
	x := indexFor(reqs)
	counted := map[uint64]int{}
	out := make([]float64, len(reqs))
	for k := range reqs {
		r := &reqs[k]
		matched, n := x.add(r)
		if n == 0 {
			continue
		}
		out[k] = float64(matched) / float64(n)
		m := r.Materialize()
		if matched == 0 || matched == n || r.InputTokens <= 0 || r.Adapter != "" || m.Messages != nil {
			continue
		}
		prefix := m.Prompt[:matched]
		h := maphash.String(x.seed, prefix)
		c, ok := counted[h]
		if !ok {
			var err error
			if c, err = tok.Count(ctx, prefix); err != nil {
				return nil, err
			}
			counted[h] = c
		}
		out[k] = min(float64(c)/float64(r.InputTokens), 1)
	}
	return out, nil
}

// repeatKey is the text of r as a prefix cache sees it begin: the adapter, then the prompt, or
// each message's role and content (and tool calls) in turn.
func repeatKey(r *Request) string {
	if r.Adapter == "" && r.Messages == nil {
		return r.Prompt
	}
	var b strings.Builder
	if r.Adapter != "" {
		b.WriteString(r.Adapter)
		b.WriteByte(0x1d)
	}
	b.WriteString(r.Prompt)
	for _, m := range r.Messages {
		b.WriteString(m.Role)
		b.WriteByte(0x1f)
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString(c.Function.Name)
			b.WriteString(c.Function.Arguments)
		}
		b.WriteString(m.ToolCallID)
		b.WriteByte(0x1e)
	}
	return b.String()
}

// RepeatedShare is the share of the prompt tokens of reqs that repeats earlier requests by
// design, given each one's repeated share (Repeats): weighted by its prompt tokens, or by its
// text where its length is unknown.
func RepeatedShare(reqs []Request, repeats []float64) float64 {
	var rep, all float64
	for i := range reqs {
		w := float64(reqs[i].InputTokens)
		if w <= 0 {
			w = float64(len(repeatKey(reqs[i].Materialize())))
		}
		rep += repeats[i] * w
		all += w
	}
	if all == 0 {
		return 0
	}
	return rep / all
}
