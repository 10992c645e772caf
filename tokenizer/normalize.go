package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites the whole text before pre-tokenization. A nil normalizer is the
// identity.
type normalizer func(string) string

func (n normalizer) apply(s string) string {
	if n == nil {
		return s
	}
	return n(s)
}

// pattern is tokenizers' {"String": "..."} or {"Regex": "..."}.
type pattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// compile returns a regexp2 for p; a String pattern is quoted.
func (p pattern) compile() (*regexp2.Regexp, error) {
	switch {
	case p.Regex != nil:
		return regexp2.Compile(*p.Regex, regexp2.Unicode)
	case p.String != nil:
		return regexp2.Compile(regexp2.Escape(*p.String), regexp2.Unicode)
	}
	return nil, fmt.Errorf("pattern has neither String nor Regex")
}

// parseNormalizer builds the normalizer of a "normalizer" value (null: none).
func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var n struct {
		Type        string            `json:"type"`
		Normalizers []json.RawMessage `json:"normalizers"`
		Prepend     string            `json:"prepend"`
		Pattern     pattern           `json:"pattern"`
		Content     string            `json:"content"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch n.Type {
	case "Sequence":
		var seq []normalizer
		for _, r := range n.Normalizers {
			s, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, s)
		}
		return func(s string) string {
			for _, f := range seq {
				s = f.apply(s)
			}
			return s
		}, nil
	case "Prepend":
		return func(s string) string { return n.Prepend + s }, nil
	case "Replace":
		if p := n.Pattern.String; p != nil {
			return func(s string) string { return strings.ReplaceAll(s, *p, n.Content) }, nil
		}
		re, err := n.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		return func(s string) string { out, _ := re.Replace(s, n.Content, -1, -1); return out }, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Lowercase":
		return strings.ToLower, nil
	}
	return nil, fmt.Errorf("unsupported normalizer %q", n.Type)
}
