package sim

import "encoding/json"

// The prefix cache imitates vLLM's automatic prefix caching. A prompt's tokens are split
// into full blocks of the KV cache's block size; block k's hash chains block k−1's hash with
// block k's token ids, so equal hashes mean equal prefixes up to and including the block. A
// request reuses the longest run of leading blocks whose hashes are cached, and only the
// rest of its prompt is prefilled.
//
// The cached blocks live in the KV cache itself, not beside it: a block held by a running
// sequence is in use; a block no running sequence holds stays cached but is free to be
// evicted, least recently released first, when new tokens need the room.
//
// Generated tokens are hashed too, as vLLM does, so that a multi-turn session which sends
// the previous reply back reuses it: the reply's words tokenize to the very ids the engine
// generated (each a vocabulary word with a space before it).

// DefaultBlockSize is the KV-cache block size in tokens when Config.BlockSize is 0: vLLM's
// default for CUDA devices.
const DefaultBlockSize = 16

// FNV-1a's 64-bit parameters, used over token ids rather than bytes.
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// cacheBlock is one cached KV block. refs counts the running sequences holding it; a block
// with no refs is on the LRU list, ready to be evicted.
type cacheBlock struct {
	hash       uint64
	refs       int
	prev, next *cacheBlock // LRU links while refs == 0
}

// prefixCache maps block hashes to blocks and keeps the unreferenced ones in LRU order.
// The engine goroutine alone uses it.
type prefixCache struct {
	blocks map[uint64]*cacheBlock // one findable block per hash
	lru    cacheBlock             // sentinel: lru.next is the least recently released block
	count  int                    // cached blocks, held or free, copies included
	free   int                    // blocks with no refs (on the LRU list)
}

func newPrefixCache() *prefixCache {
	c := &prefixCache{blocks: make(map[uint64]*cacheBlock)}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// size is the number of cached blocks, held or free.
func (c *prefixCache) size() int { return c.count }

// match appends to dst the cached blocks of the longest run of leading hashes, at most max
// of them, and reports how many of those are free (so the caller can tell how much room
// evicting would leave once it holds them). It changes nothing.
func (c *prefixCache) match(dst []*cacheBlock, hashes []uint64, max int) (hit []*cacheBlock, free int) {
	for _, h := range hashes[:min(max, len(hashes))] {
		b, ok := c.blocks[h]
		if !ok {
			break
		}
		if b.refs == 0 {
			free++
		}
		dst = append(dst, b)
	}
	return dst, free
}

// hold takes a reference on b, taking it off the LRU list if it was free.
func (c *prefixCache) hold(b *cacheBlock) {
	if b.refs == 0 {
		b.prev.next, b.next.prev = b.next, b.prev
		b.prev, b.next = nil, nil
		c.free--
	}
	b.refs++
}

// release drops a reference; the last one puts b at the most recently used end of the list.
func (c *prefixCache) release(b *cacheBlock) {
	b.refs--
	if b.refs > 0 {
		return
	}
	b.prev, b.next = c.lru.prev, &c.lru
	c.lru.prev.next = b
	c.lru.prev = b
	c.free++
}

// insert caches a block a sequence has just computed, held by that sequence. When the hash
// is cached already (a sequence admitted in the same step as its twin, or the last block the
// hit had to leave out), the new block is a copy: it takes its own room, as in vLLM, which
// does not merge the blocks of running requests, but lookups find the first one only.
func (c *prefixCache) insert(h uint64) *cacheBlock {
	b := &cacheBlock{hash: h, refs: 1}
	if _, ok := c.blocks[h]; !ok {
		c.blocks[h] = b
	}
	c.count++
	return b
}

// evict drops the least recently released free block; false when none is free.
func (c *prefixCache) evict() bool {
	b := c.lru.next
	if b == &c.lru {
		return false
	}
	c.lru.next, b.next.prev = b.next, &c.lru
	if c.blocks[b.hash] == b {
		delete(c.blocks, b.hash)
	}
	c.count--
	c.free--
	return true
}

// blockHasher chains the hashes of full blocks of token ids. It keeps the partial last
// block, so that a sequence's generated tokens continue its prompt's hashes.
type blockHasher struct {
	size, n int
	tokens  int // fed so far
	h       uint64
	out     []uint64 // the hash of every full block so far
}

func newBlockHasher(blockSize, capTokens int) blockHasher {
	return blockHasher{size: blockSize, h: fnvOffset64, out: make([]uint64, 0, capTokens/blockSize+1)}
}

// add feeds one token id. At a block boundary the running hash is finalised (mixed, so that
// similar blocks spread over the whole map) and becomes the seed of the next block's hash.
func (b *blockHasher) add(id int) {
	b.h = (b.h ^ uint64(id)) * fnvPrime64
	b.n++
	b.tokens++
	if b.n == b.size {
		b.h = mix64(b.h)
		b.out = append(b.out, b.h)
		b.n = 0
	}
}

// outputIDs[w] is the token id of output word w as the tokenizer reads it back: the word's
// first vocabulary index (vocab has repeats) with the space-before bit.
var outputIDs = func() []int {
	ids := make([]int, len(vocab))
	for i, w := range vocab {
		ids[i] = vocabIndex[w]<<1 | 1
	}
	return ids
}()

// promptBlockHashes hashes the full blocks of a prompt: the ids of its text by the
// simulator's tokenizer, or the token ids the client sent (raw, when idCount > 0), so that a
// prompt sent as text and the same prompt sent as the ids /tokenize returns share blocks.
// The hasher's token count is the prompt's: hashing replaces countTokens' scan.
func promptBlockHashes(text string, raw json.RawMessage, idCount, blockSize int) blockHasher {
	// Room for the prompt's blocks and some generated ones: a token takes at least 2 bytes
	// of text but a word, 5 or 6 in English; append grows the rest.
	bh := newBlockHasher(blockSize, max(idCount, len(text)/4))
	if idCount > 0 {
		for _, id := range promptIDs(raw) {
			bh.add(id)
		}
		return bh
	}
	scanTokens(text, func(piece string, space bool) {
		id, _ := pieceID(piece, space)
		bh.add(id)
	})
	return bh
}

// promptIDs decodes a prompt already known to be token ids (a list, or a one-element list
// of lists). parsePrompt only counts them; decoding again here keeps the ids off the path of
// requests that do not need them.
func promptIDs(raw json.RawMessage) []int {
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		return ids
	}
	var idss [][]int
	if json.Unmarshal(raw, &idss) == nil && len(idss) == 1 {
		return idss[0]
	}
	return nil
}

// matchPrefix finds the cached leading blocks of a sequence about to be admitted with
// nothing computed. The hit stops short of the last token, which must be computed to
// sample the next one: a full hit is capped at (tokens−1) rounded down to a block, as in
// vLLM. free is how many of the hit blocks are free (see fits).
func (s *scheduler) matchPrefix(q *seq) (hit []*cacheBlock, free int) {
	if s.cache == nil || q.computed > 0 {
		return nil, 0
	}
	s.hit, free = s.cache.match(s.hit[:0], q.hasher.out, (q.prefillTarget-1)/s.m.blockSize)
	return s.hit, free
}

// holdPrefix makes q start from its cached blocks, and at q's first admission records the
// lookup as vLLM does: queries and hits in tokens, and q's cached count for its usage.
func (s *scheduler) holdPrefix(q *seq, hit []*cacheBlock) {
	if s.cache == nil {
		return
	}
	for _, b := range hit {
		s.cache.hold(b)
	}
	q.blocks = append(q.blocks[:0], hit...)
	q.computed = len(hit) * s.m.blockSize
	clear(s.hit)
	if !q.queried {
		q.queried = true
		s.queries += int64(q.prefillTarget)
		s.hits += int64(q.computed)
		q.cached.Store(int64(q.computed))
	}
}

// cacheBlocks caches every block q has now computed in full, as its own.
func (s *scheduler) cacheBlocks(q *seq) {
	bs := s.m.blockSize
	for k := len(q.blocks); k < len(q.hasher.out) && (k+1)*bs <= q.computed; k++ {
		q.blocks = append(q.blocks, s.cache.insert(q.hasher.out[k]))
	}
}
