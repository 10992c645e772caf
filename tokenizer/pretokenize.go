package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/dlclark/regexp2"
)

// preTokenizer splits pieces of text into smaller pieces (and may rewrite them, as
// ByteLevel does); BPE never merges across pieces.
type preTokenizer interface {
	split(pieces []string) []string
}

// gpt2Pattern is GPT-2's pre-tokenizer regex, used by ByteLevel with use_regex. Its
// `\s+(?!\S)` (whitespace not followed by a non-space: the last space of a run goes with the
// next word) is the lookahead RE2 cannot express.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// parsePreTokenizer builds the pre-tokenizer chain of a "pre_tokenizer" value.
func parsePreTokenizer(raw json.RawMessage) ([]preTokenizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p struct {
		Type             string            `json:"type"`
		PreTokenizers    []json.RawMessage `json:"pretokenizers"`
		AddPrefixSpace   bool              `json:"add_prefix_space"`
		UseRegex         *bool             `json:"use_regex"`
		Pattern          pattern           `json:"pattern"`
		Behavior         string            `json:"behavior"`
		Invert           bool              `json:"invert"`
		Replacement      string            `json:"replacement"`
		PrependScheme    string            `json:"prepend_scheme"`
		Split            *bool             `json:"split"`
		IndividualDigits bool              `json:"individual_digits"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch p.Type {
	case "Sequence":
		var seq []preTokenizer
		for _, r := range p.PreTokenizers {
			s, err := parsePreTokenizer(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, s...)
		}
		return seq, nil
	case "ByteLevel":
		b := &byteLevel{prefixSpace: p.AddPrefixSpace}
		if p.UseRegex == nil || *p.UseRegex {
			b.re = regexp2.MustCompile(gpt2Pattern, regexp2.Unicode)
		}
		return []preTokenizer{b}, nil
	case "Split":
		re, err := p.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		if p.Invert || (p.Behavior != "Isolated" && p.Behavior != "Removed" && p.Behavior != "MergedWithPrevious" && p.Behavior != "MergedWithNext") {
			return nil, fmt.Errorf("unsupported Split behavior %q (invert %v)", p.Behavior, p.Invert)
		}
		return []preTokenizer{&splitter{re: re, behavior: p.Behavior}}, nil
	case "Metaspace":
		return []preTokenizer{&metaspace{repl: p.Replacement, scheme: p.PrependScheme, splitOn: p.Split == nil || *p.Split}}, nil
	case "Digits":
		return []preTokenizer{digits(p.IndividualDigits)}, nil
	}
	return nil, fmt.Errorf("unsupported pre_tokenizer %q", p.Type)
}

// splitter splits on regex matches with one of tokenizers' behaviors.
type splitter struct {
	re       *regexp2.Regexp
	behavior string
}

func (s *splitter) split(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		out = splitRegex(out, p, s.re, s.behavior)
	}
	return out
}

// splitRegex appends the parts of p around the matches of re. regexp2 works on runes, so
// match positions are rune indices.
func splitRegex(out []string, p string, re *regexp2.Regexp, behavior string) []string {
	rs := []rune(p)
	last := 0
	pending := "" // MergedWithNext: a match waiting for the text after it
	emit := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	m, _ := re.FindRunesMatch(rs)
	for ; m != nil; m, _ = re.FindNextMatch(m) {
		if m.Length == 0 {
			continue
		}
		gap, match := string(rs[last:m.Index]), string(rs[m.Index:m.Index+m.Length])
		last = m.Index + m.Length
		switch behavior {
		case "Isolated":
			emit(gap)
			emit(match)
		case "Removed":
			emit(gap)
		case "MergedWithPrevious":
			emit(gap + match)
		case "MergedWithNext":
			emit(pending + gap)
			pending = match
		}
	}
	if behavior == "MergedWithNext" {
		emit(pending + string(rs[last:]))
		return out
	}
	emit(string(rs[last:]))
	return out
}

// byteLevel is GPT-2's byte-level pre-tokenizer: split with its regex (when use_regex), then
// map every byte to a printable rune, so the vocabulary covers any input without an unknown
// token.
type byteLevel struct {
	re          *regexp2.Regexp
	prefixSpace bool
}

func (b *byteLevel) split(pieces []string) []string {
	if b.prefixSpace && len(pieces) > 0 && !strings.HasPrefix(pieces[0], " ") {
		pieces[0] = " " + pieces[0]
	}
	if b.re != nil {
		var out []string
		for _, p := range pieces {
			out = splitRegex(out, p, b.re, "Isolated")
		}
		pieces = out
	}
	for i, p := range pieces {
		var sb strings.Builder
		for j := 0; j < len(p); j++ {
			sb.WriteRune(byteRune[p[j]])
		}
		pieces[i] = sb.String()
	}
	return pieces
}

// byteRune is GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the other
// 68 bytes to U+0100 upwards in byte order.
var byteRune = func() (m [256]rune) {
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// metaspace replaces spaces with a marker (▁), optionally prepends it, and splits before it.
type metaspace struct {
	repl, scheme string
	splitOn      bool
}

func (m *metaspace) split(pieces []string) []string {
	var out []string
	for i, p := range pieces {
		p = strings.ReplaceAll(p, " ", m.repl)
		if (m.scheme == "always" || m.scheme == "" || (m.scheme == "first" && i == 0)) && !strings.HasPrefix(p, m.repl) {
			p = m.repl + p
		}
		if !m.splitOn {
			out = append(out, p)
			continue
		}
		for len(p) > 0 {
			off := 0
			if strings.HasPrefix(p, m.repl) {
				off = len(m.repl)
			}
			j := strings.Index(p[off:], m.repl)
			if j < 0 {
				out = append(out, p)
				break
			}
			out = append(out, p[:off+j])
			p = p[off+j:]
		}
	}
	return out
}

// digits isolates digits: each one (individual) or each run of them.
type digits bool

func (d digits) split(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		start, prevDigit := 0, false
		for i, r := range p {
			isDigit := unicode.IsDigit(r)
			if i > start && (isDigit != prevDigit || (isDigit && bool(d))) {
				out = append(out, p[start:i])
				start = i
			}
			prevDigit = isDigit
		}
		if start < len(p) {
			out = append(out, p[start:])
		}
	}
	return out
}
