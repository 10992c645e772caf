package sim

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The simulator's tokenizer is deliberately simple so that a client can build prompts of an
// exact length without a model file:
//
//   - whitespace separates tokens and is not a token itself;
//   - a run of letters and digits is a word: one token when it has at most 8 characters,
//     otherwise one token per 4 characters;
//   - every other character (punctuation, symbols) is one token.
//
// So "the cat sat." is 4 tokens, and N vocabulary words joined by spaces are N tokens.
//
// Token ids carry a "space before" bit (like SentencePiece's ▁) so that detokenize restores
// single-space text exactly: id = base<<1 | spaceBefore, where base is the word's index in
// vocab, or len(vocab) + a 28-bit FNV hash of the piece for any other piece.
const (
	maxWordRunes = 8
	pieceRunes   = 4
	hashSpace    = 1 << 28
	maxRemember  = 1 << 20 // cap on remembered hashed pieces, so /tokenize cannot grow memory forever
)

// vocab is the output vocabulary: common English words of at most 8 letters, each one token.
var vocab = strings.Fields(`the of and to in is was for that on as with by he at from his an
were are which this be or has had first one their its new after but who not they have her she
two been other when there all during into school time may years more most only over city some
world would where later up such used many can state about out known then made also team him
series three season war film between both year under north since while game same each south
well work public house through early home number group life part high water music family name
area long system west place church league day river line before second until four county old
major around best small large court power party club began album song members built held east
played back station company local people could district general former became released than
several village these based order field book market road land light king green open story
model token stream batch cache queue server engine speed value point level price color table
paper window garden letter animal forest island bridge summer winter spring autumn morning
evening night moment answer reason simple clear quick quiet bright gentle strong little great`)

// vocabIndex maps a vocabulary word to its index.
var vocabIndex = func() map[string]int {
	m := make(map[string]int, len(vocab))
	for i, w := range vocab {
		if _, dup := m[w]; !dup {
			m[w] = i
		}
	}
	return m
}()

// outputPieces holds each vocabulary word with its leading space, preformatted for the
// stream's hot path (plain ASCII letters need no JSON escaping).
var outputPieces = func() []string {
	p := make([]string, len(vocab))
	for i, w := range vocab {
		p[i] = " " + w
	}
	return p
}()

// outputWord is the index of the i-th output token of a request whose text seed is h.
func outputWord(h uint64, i int) int { return int(mix64(h+uint64(i)) % uint64(len(vocab))) }

// tokenizer remembers the pieces behind hashed ids so that /detokenize can invert what
// /tokenize produced.
type tokenizer struct {
	mu     sync.Mutex
	pieces map[int]string
}

func newTokenizer() *tokenizer { return &tokenizer{pieces: make(map[int]string)} }

// countTokens counts the tokens of s without allocating (the prefill and usage path).
func countTokens(s string) int { return scanTokens(s, nil) }

// encode returns the token ids of s and remembers hashed pieces for decode.
func (t *tokenizer) encode(s string) []int {
	var ids []int
	scanTokens(s, func(piece string, space bool) {
		id, hashed := pieceID(piece, space)
		if hashed {
			t.remember(id>>1, piece)
		}
		ids = append(ids, id)
	})
	return ids
}

func (t *tokenizer) remember(base int, piece string) {
	t.mu.Lock()
	if len(t.pieces) < maxRemember {
		t.pieces[base] = piece
	}
	t.mu.Unlock()
}

// decode inverts encode. Unknown hashed ids (never seen by encode) are an error.
func (t *tokenizer) decode(ids []int) (string, error) {
	var b strings.Builder
	for i, id := range ids {
		if id < 0 {
			return "", fmt.Errorf("token %d: negative id %d", i, id)
		}
		base := id >> 1
		if id&1 == 1 && b.Len() > 0 {
			b.WriteByte(' ')
		}
		if base < len(vocab) {
			b.WriteString(vocab[base])
			continue
		}
		t.mu.Lock()
		p, ok := t.pieces[base]
		t.mu.Unlock()
		if !ok {
			return "", fmt.Errorf("token %d: unknown id %d", i, id)
		}
		b.WriteString(p)
	}
	return b.String(), nil
}

// pieceID is the id of one piece; hashed reports that it is not a vocabulary word.
func pieceID(piece string, space bool) (id int, hashed bool) {
	sp := 0
	if space {
		sp = 1
	}
	if i, ok := vocabIndex[piece]; ok {
		return i<<1 | sp, false
	}
	return (len(vocab)+int(fnv32a(piece)%hashSpace))<<1 | sp, true
}

// fnv32a is hash/fnv's 32-bit FNV-1a of s, inlined: through the hash.Hash32 interface every
// hashed piece cost an allocation, and the prefix cache hashes every prompt token.
func fnv32a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// scanTokens splits s by the rules above, calling emit (when non-nil) for every piece, and
// returns the count. The count-only path does not allocate.
func scanTokens(s string, emit func(piece string, space bool)) int {
	n, space := 0, true
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case r == ' ' || r == '\n' || r == '\t' || r == '\r' || (r >= utf8.RuneSelf && unicode.IsSpace(r)):
			space = true
			i += size
		case isWordRune(r):
			j, runes := i, 0
			for j < len(s) {
				r2, sz := rune(s[j]), 1
				if r2 >= utf8.RuneSelf {
					r2, sz = utf8.DecodeRuneInString(s[j:])
				}
				if !isWordRune(r2) {
					break
				}
				j += sz
				runes++
			}
			n += emitWord(s[i:j], runes, space, emit)
			space, i = false, j
		default:
			if emit != nil {
				emit(s[i:i+size], space)
			}
			n++
			space, i = false, i+size
		}
	}
	return n
}

// emitWord emits a word as one piece, or as 4-rune pieces when it is long.
func emitWord(w string, runes int, space bool, emit func(string, bool)) int {
	if runes <= maxWordRunes {
		if emit != nil {
			emit(w, space)
		}
		return 1
	}
	count := (runes + pieceRunes - 1) / pieceRunes
	if emit == nil {
		return count
	}
	for start, k := 0, 0; start < len(w); k++ {
		end := start
		for c := 0; c < pieceRunes && end < len(w); c++ {
			_, sz := utf8.DecodeRuneInString(w[end:])
			end += sz
		}
		emit(w[start:end], space && k == 0)
		start = end
	}
	return count
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
