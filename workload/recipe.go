package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"strings"
)

// A synthetic prompt is fully determined by its seed, its index in the seed's stream, the
// lengths asked for, how many of its drawn words it keeps and the filler appended after them:
// the tokenizer that measured it chose the last two, and no tokenizer is needed to rebuild it.
// A lazy workload (Synthetic.Lazy) keeps each request as that recipe, about 80 bytes, and
// rebuilds its text when it is sent, hashed or saved (Materialize), so a run of a thousand
// 128k-token prompts holds no 700 MB of text; the records header carries the recipes
// (HeaderRecipe) and the hash of the text they rebuild, instead of the text.

// genSettings are the draws a synthetic request's recipe replays.
type genSettings struct {
	seed             int64
	inTokens, outTok int
	ratio            float64
	chat             bool
	nonce            uint64 // Synthetic.Nonce: the words' own stream when not 0
}

// wordBytes is 64 times the mean bytes of a vocabulary word and its space, plus 2%: the text
// of many words is within it, so a rebuild allocates once.
var wordBytes = func() int {
	n := 0
	for _, w := range vocabulary {
		n += len(w) + 1
	}
	return n * 64 * 102 / 100 / len(vocabulary)
}()

// recipe rebuilds one synthetic request's prompt.
type recipe struct {
	gen   genSettings
	index int    // in the seed's stream
	words int    // drawn words kept
	pad   string // filler appended after them (pad pieces)
}

// text rebuilds the prompt: the same draws as Synthetic.one, in the same order.
func (rc *recipe) text() string {
	src := rand.NewPCG(uint64(rc.gen.seed), uint64(rc.index))
	rng := rand.New(src)
	drawLength(rng, rc.gen.inTokens, rc.gen.ratio)
	drawLength(rng, rc.gen.outTok, rc.gen.ratio)
	if rc.gen.nonce != 0 {
		src = textSource(rc.gen.seed, rc.gen.nonce, rc.index)
		rng = rand.New(src)
	}
	var sb strings.Builder
	sb.Grow(rc.words*wordBytes/64 + len(rc.pad)) // a little above the mean, rarely grown
	for w := range rc.words {
		if w > 0 {
			sb.WriteByte(' ')
		}
		if bits.UintSize == 64 {
			sb.WriteString(vocabulary[wordIndex(src)])
		} else { // math/rand/v2 draws small ranges another way on 32-bit platforms
			sb.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		}
	}
	sb.WriteString(rc.pad)
	return sb.String()
}

// wordIndex is rng.IntN(len(vocabulary)) of a rand.Rand over src, drawn from src directly:
// a rebuild is on the path of every send, and the Rand's interface call per word is a third
// of its cost. It is math/rand/v2's uint64n (Lemire's multiply and reject) for a length that
// is not a power of two, on a 64-bit platform; if Go ever draws differently, the rebuilt text no longer matches
// its hash and the tests comparing lazy with eager prompts fail.
func wordIndex(src *rand.PCG) int {
	n := uint64(len(vocabulary))
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return int(hi)
}

// drawn is the prompt length (tokens) the recipe's request was built for.
func (rc *recipe) drawn() int {
	rng := rand.New(rand.NewPCG(uint64(rc.gen.seed), uint64(rc.index)))
	return drawLength(rng, rc.gen.inTokens, rc.gen.ratio)
}

// recipeOf is request i's recipe, checked by rebuilding its text; nil when the rebuild
// differs (never expected: the request then keeps its text).
func (s *Synthetic) recipeOf(i int, bt built) *recipe {
	rc := &recipe{gen: genSettings{seed: s.Seed, inTokens: s.InputTokens, outTok: s.OutputTokens, ratio: s.RangeRatio, chat: s.Chat, nonce: s.Nonce},
		index: i, words: bt.words, pad: bt.pad}
	if rc.text() != bt.text {
		return nil
	}
	return rc
}

// Lazy reports whether r is kept as its recipe only, its text rebuilt when needed.
func (r *Request) Lazy() bool { return r.recipe != nil && r.Prompt == "" && r.Messages == nil }

// Materialize is r with its prompt text: r itself, or for a lazy request a copy with the text
// rebuilt (the copy is garbage once sent, so only the prompts in flight are held).
func (r *Request) Materialize() *Request {
	if !r.Lazy() {
		return r
	}
	c := *r
	c.recipe = nil
	text := r.recipe.text()
	if r.recipe.gen.chat {
		c.Messages = []Message{{Role: "user", Content: text}}
	} else {
		c.Prompt = text
	}
	return &c
}

// LazyBytes is the estimated prompt text above which a synthetic workload is best kept as
// its recipes only, its text rebuilt as each request is sent: 1,000 prompts of 128k tokens are
// about 670 MB of text. Below it the text is kept: rebuilding costs about as much CPU per send
// as encoding the request body, which a high-rate run of short prompts need not pay. A
// variable so that tests can send small workloads the lazy way.
var LazyBytes = float64(64 << 20)

// TextBytes estimates the text of n synthetic prompts of tokens tokens each: about 5.5 bytes
// a token (a word of the vocabulary and its space).
func TextBytes(n int, tokens float64) float64 { return float64(n) * tokens * 5.5 }

// RecipeGenerator names the synthetic prompt generator whose recipes a header carries. A
// generator that builds other text from the same recipe must take a new name.
const RecipeGenerator = "words/1"

// HeaderRecipe is a lazy workload in a records header: its requests as recipes, in segments
// of consecutive indices of one seed's stream, and the hash of the text they rebuild.
type HeaderRecipe struct {
	Generator string `json:"generator"`
	// SHA256 is the sha256 of the requests' prompts-file encoding, in order: the bytes
	// --save-workload writes (sha256sum of that file gives the same digest).
	SHA256   string          `json:"sha256"`
	Count    int             `json:"count"`
	Segments []RecipeSegment `json:"segments"`
}

// RecipeSegment is Count requests of indices First, First+1, … of one seed's stream.
type RecipeSegment struct {
	Seed         int64   `json:"seed"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	RangeRatio   float64 `json:"range_ratio,omitempty"`
	Chat         bool    `json:"chat,omitempty"`
	// Nonce is the per-invocation nonce the words were drawn with (Synthetic.Nonce), as a
	// string: a JSON number loses a uint64's low bits in most readers. Absent: none.
	Nonce string `json:"nonce,omitempty"`
	First int    `json:"first"`
	Count int    `json:"count"`
	// Words are the drawn words each request keeps; absent when every request keeps as
	// many as its prompt's tokens (a build without a tokenizer).
	Words []int `json:"words,omitempty"`
	// Pads are the filler appended after the words, by position in the segment (absent: none).
	Pads map[int]string `json:"pads,omitempty"`
	// Tokens are the measured prompt lengths that differ from the length drawn (a prompt the
	// builder could not bring to its exact length), by position in the segment.
	Tokens map[int]int `json:"tokens,omitempty"`
}

// RecipeOf is the header recipe of reqs, whose encoding hashes to sha (EncodedSHA256 or
// Hashes); ok is false unless every request has a recipe (then the text must be embedded).
func RecipeOf(reqs []Request, sha string) (rc *HeaderRecipe, ok bool) {
	if len(reqs) == 0 {
		return nil, false
	}
	rc = &HeaderRecipe{Generator: RecipeGenerator, Count: len(reqs)}
	var seg *RecipeSegment
	prev := -1
	for i := range reqs {
		r := reqs[i].recipe
		// a recipe rebuilds the prompt text only: a request that also names an adapter or
		// carries media is embedded as it is
		if r == nil || reqs[i].Session != 0 || reqs[i].Adapter != "" || len(reqs[i].Media) > 0 {
			return nil, false
		}
		if seg == nil || !seg.holds(r.gen) || r.index != prev+1 {
			rc.Segments = append(rc.Segments, RecipeSegment{Seed: r.gen.seed, InputTokens: r.gen.inTokens,
				OutputTokens: r.gen.outTok, RangeRatio: r.gen.ratio, Chat: r.gen.chat, Nonce: FormatNonce(r.gen.nonce), First: r.index})
			seg = &rc.Segments[len(rc.Segments)-1]
		}
		seg.add(r, reqs[i].InputTokens)
		prev = r.index
	}
	for i := range rc.Segments {
		rc.Segments[i].compact()
	}
	rc.SHA256 = sha
	return rc, true
}

func (s *RecipeSegment) holds(g genSettings) bool {
	return s.Seed == g.seed && s.InputTokens == g.inTokens && s.OutputTokens == g.outTok &&
		s.RangeRatio == g.ratio && s.Chat == g.chat && s.Nonce == FormatNonce(g.nonce)
}

// add appends one request's recipe to the segment.
func (s *RecipeSegment) add(r *recipe, tokens int) {
	k := s.Count
	s.Count++
	s.Words = append(s.Words, r.words)
	if r.pad != "" {
		if s.Pads == nil {
			s.Pads = map[int]string{}
		}
		s.Pads[k] = r.pad
	}
	if tokens != r.drawn() {
		if s.Tokens == nil {
			s.Tokens = map[int]int{}
		}
		s.Tokens[k] = tokens
	}
}

// compact drops Words when each equals its request's prompt tokens (no tokenizer was used).
func (s *RecipeSegment) compact() {
	for k, w := range s.Words {
		if w != s.tokens(k, s.drawnAt(k)) {
			return
		}
	}
	s.Words = nil
}

func (s *RecipeSegment) gen() genSettings {
	n, _ := ParseNonce(s.Nonce) // checked by validate
	return genSettings{seed: s.Seed, inTokens: s.InputTokens, outTok: s.OutputTokens, ratio: s.RangeRatio, chat: s.Chat, nonce: n}
}

func (s *RecipeSegment) drawnAt(k int) int {
	return (&recipe{gen: s.gen(), index: s.First + k}).drawn()
}

// tokens is request k's prompt length: its own when recorded, else the drawn one.
func (s *RecipeSegment) tokens(k, drawn int) int {
	if t, ok := s.Tokens[k]; ok {
		return t
	}
	return drawn
}

// EncodedSHA256 is "sha256:" and the hex sha256 of the requests' prompts-file encoding
// (lazy requests rebuilt one at a time).
func EncodedSHA256(reqs []Request) (string, error) {
	h := sha256.New()
	if err := encodeAll(h, reqs); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Hashes is Hash of the first n requests and EncodedSHA256 of them all, in one pass: a lazy
// workload's prompts are rebuilt once, not once per hash.
func Hashes(reqs []Request, n int, settings any) (hash, all string, err error) {
	n = min(max(n, 0), len(reqs))
	first, whole := sha256.New(), sha256.New()
	if err := encodeAll(io.MultiWriter(first, whole), reqs[:n]); err != nil {
		return "", "", err
	}
	if err := encodeAll(whole, reqs[n:]); err != nil {
		return "", "", err
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", "", err
	}
	first.Write(b)
	return "sha256:" + hex.EncodeToString(first.Sum(nil)), "sha256:" + hex.EncodeToString(whole.Sum(nil)), nil
}

// Requests rebuilds the header recipe's requests, lazy, and checks the text they rebuild
// against its hash: a recipe this servebench cannot rebuild exactly is an error, never a
// silently different workload.
func (rc *HeaderRecipe) Requests() ([]Request, error) {
	if err := rc.validate(); err != nil {
		return nil, err
	}
	reqs := make([]Request, 0, rc.Count)
	for si := range rc.Segments {
		s := &rc.Segments[si]
		for k := range s.Count {
			r := &recipe{gen: s.gen(), index: s.First + k, pad: s.Pads[k]}
			n := r.drawn()
			tokens := s.tokens(k, n)
			r.words = tokens
			if s.Words != nil {
				r.words = s.Words[k]
			}
			if r.words > wordsDrawn(n) {
				return nil, fmt.Errorf("recipe segment %d request %d keeps %d words of the %d drawn", si, k, r.words, wordsDrawn(n))
			}
			rng := rand.New(rand.NewPCG(uint64(s.Seed), uint64(r.index)))
			drawLength(rng, s.InputTokens, s.RangeRatio)
			out := drawLength(rng, s.OutputTokens, s.RangeRatio)
			reqs = append(reqs, Request{ID: len(reqs), InputTokens: tokens, OutputTokens: out, recipe: r})
		}
	}
	got, err := EncodedSHA256(reqs)
	if err != nil {
		return nil, err
	}
	if got != rc.SHA256 {
		return nil, fmt.Errorf("the prompts rebuilt from its recipe hash to %s, not its %s: this servebench builds them differently from the one that wrote it", short(got), short(rc.SHA256))
	}
	if TextBytes(1, float64(tokens(reqs))) <= LazyBytes {
		for i := range reqs { // small enough to keep: no rebuild on every send
			reqs[i].fill()
		}
	}
	return reqs, nil
}

// tokens is the requests' prompt tokens in all.
func tokens(reqs []Request) int {
	n := 0
	for i := range reqs {
		n += reqs[i].InputTokens
	}
	return n
}

// fill gives a lazy request its text, keeping its recipe.
func (r *Request) fill() {
	if m := r.Materialize(); m != r {
		r.Prompt, r.Messages = m.Prompt, m.Messages
	}
}

// maxRecipeCount bounds a header recipe's requests and pads, so that a damaged header
// cannot ask for unbounded memory.
const (
	maxRecipeCount = 1 << 24
	maxPadBytes    = 4096
)

// validate checks a header recipe read from a file before anything is built from it.
func (rc *HeaderRecipe) validate() error {
	if rc.Generator != RecipeGenerator {
		return fmt.Errorf("its prompt recipe is for generator %q, this servebench has %q", rc.Generator, RecipeGenerator)
	}
	total := 0
	for i, s := range rc.Segments {
		syn := Synthetic{Count: s.Count, First: s.First, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, RangeRatio: s.RangeRatio}
		switch err := syn.Validate(); {
		case err != nil:
			return fmt.Errorf("recipe segment %d: %v", i, err)
		case s.InputTokens > maxTraceTokens || s.OutputTokens > maxTraceTokens:
			return fmt.Errorf("recipe segment %d: lengths over %d tokens", i, maxTraceTokens)
		case s.Nonce != "" && !validNonce(s.Nonce):
			return fmt.Errorf("recipe segment %d: nonce %q is not 16 hex digits", i, s.Nonce)
		case s.Words != nil && len(s.Words) != s.Count:
			return fmt.Errorf("recipe segment %d: %d word counts for %d requests", i, len(s.Words), s.Count)
		}
		if err := s.validateMaps(i); err != nil {
			return err
		}
		total += s.Count
		if total > maxRecipeCount {
			return fmt.Errorf("recipe: more than %d requests", maxRecipeCount)
		}
	}
	if total != rc.Count || total == 0 {
		return fmt.Errorf("recipe: its segments hold %d requests, its count is %d", total, rc.Count)
	}
	return nil
}

func (s *RecipeSegment) validateMaps(i int) error {
	for k, p := range s.Pads {
		if k < 0 || k >= s.Count || len(p) > maxPadBytes {
			return fmt.Errorf("recipe segment %d: pad %d out of range", i, k)
		}
	}
	for k, t := range s.Tokens {
		if k < 0 || k >= s.Count || t < 0 || t > maxTraceTokens {
			return fmt.Errorf("recipe segment %d: tokens %d out of range", i, k)
		}
	}
	for _, w := range s.Words {
		if w < 0 {
			return errors.New("recipe: a negative word count")
		}
	}
	return nil
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}
