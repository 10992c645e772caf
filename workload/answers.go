package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Match rules of an answer key, the values of an answers file's "match".
const (
	MatchExact  = "exact"  // the output, trimmed, equals the answer ignoring case
	MatchRegex  = "regex"  // the output contains a match of the answer, a Go (RE2) regular expression
	MatchChoice = "choice" // the output's first choice letter is the answer's letter
	MatchNumber = "number" // the output's first number is within Tolerance of the answer
)

// MatchRules lists the match rules.
var MatchRules = []string{MatchExact, MatchRegex, MatchChoice, MatchNumber}

// Answer is a request's answer key: the right answer and how an output is scored against it.
type Answer struct {
	Value     string  `json:"value"`
	Match     string  `json:"match"`
	Tolerance float64 `json:"tolerance,omitempty"`
	re        *regexp.Regexp
	num       float64
	ready     bool // compile succeeded
}

// answerFields are the answer-key fields of a prompts or answers file line.
type answerFields struct {
	// Answer is a JSON string or number (a number is kept as written).
	Answer    json.RawMessage `json:"answer,omitempty"`
	Match     string          `json:"match,omitempty"`
	Tolerance *float64        `json:"tolerance,omitempty"`
}

// key checks the fields and returns the Answer they give (nil when the line has none).
func (f answerFields) key() (*Answer, error) {
	raw := bytes.TrimSpace(f.Answer)
	if len(raw) == 0 || string(raw) == "null" {
		if f.Match != "" || f.Tolerance != nil {
			return nil, errors.New(`"match" and "tolerance" need an "answer"`)
		}
		return nil, nil
	}
	a := &Answer{Match: strings.ToLower(f.Match)}
	if a.Match == "" {
		a.Match = MatchExact
	}
	switch {
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &a.Value); err != nil {
			return nil, fmt.Errorf(`"answer": %v`, err)
		}
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		a.Value = string(raw)
	default:
		return nil, errors.New(`"answer": want a string or a number`)
	}
	if f.Tolerance != nil {
		a.Tolerance = *f.Tolerance
	}
	return a, a.compile()
}

// fieldsOf is a's file fields (none for nil), so a saved workload keeps its answer key.
func fieldsOf(a *Answer) answerFields {
	if a == nil {
		return answerFields{}
	}
	raw, _ := json.Marshal(a.Value) // a string always encodes
	f := answerFields{Answer: raw, Match: a.Match}
	if a.Tolerance != 0 {
		f.Tolerance = &a.Tolerance
	}
	return f
}

// compile checks the key and prepares its matcher.
func (a *Answer) compile() error {
	if a.Tolerance != 0 && a.Match != MatchNumber {
		return fmt.Errorf(`"tolerance" goes with "match": "number", not %q`, a.Match)
	}
	switch a.Match {
	case MatchExact:
		if strings.TrimSpace(a.Value) == "" {
			return errors.New(`"answer": must not be empty`)
		}
	case MatchRegex:
		re, err := regexp.Compile(a.Value)
		if err != nil {
			return fmt.Errorf(`"answer": not a regular expression: %v`, err)
		}
		a.re = re
	case MatchChoice:
		v := strings.TrimSpace(a.Value)
		if len(v) != 1 || !unicode.IsLetter(rune(v[0])) {
			return fmt.Errorf(`"answer" %q: a choice is one letter, A to Z`, a.Value)
		}
	case MatchNumber:
		n, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(a.Value), ",", ""), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return fmt.Errorf(`"answer" %q: not a number`, a.Value)
		}
		if !(a.Tolerance >= 0) || math.IsInf(a.Tolerance, 0) {
			return fmt.Errorf(`"tolerance" %v: want a finite number ≥ 0`, a.Tolerance)
		}
		a.num = n
	default:
		return fmt.Errorf(`"match" %q: want %s`, a.Match, strings.Join(MatchRules, ", "))
	}
	a.ready = true
	return nil
}

// Score reports whether output is right under the key's rule (docs/accuracy.md):
//   - exact: the output with surrounding white space trimmed equals the answer (trimmed too),
//     ignoring case;
//   - regex: the expression matches somewhere in the output (anchor it to match the whole);
//   - choice: the output's choice letter (Choice) is the answer's, ignoring case;
//   - number: the output's first number (FirstNumber) is within Tolerance of the answer.
func (a *Answer) Score(output string) bool {
	if !a.ready && a.compile() != nil { // a key built in code rather than read from a file
		return false
	}
	switch a.Match {
	case MatchExact:
		return strings.EqualFold(strings.TrimSpace(output), strings.TrimSpace(a.Value))
	case MatchRegex:
		return a.re.MatchString(output)
	case MatchChoice:
		c, ok := Choice(output)
		return ok && strings.EqualFold(c, strings.TrimSpace(a.Value))
	case MatchNumber:
		n, ok := FirstNumber(output)
		return ok && math.Abs(n-a.num) <= a.Tolerance
	}
	return false
}

var (
	choiceSaid  = regexp.MustCompile(`(?i)\banswer\s*(?:is|:)?\s*[(\[]?([A-Za-z])\b`)
	choiceAlone = regexp.MustCompile(`\b([A-Z])\b`)
	firstNumber = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+`)
)

// Choice is the choice letter of a multiple-choice answer, upper case: the whole output when
// it is one letter (with brackets or a full stop: "(b)", "B."), else the letter after
// "answer is" or "answer:", else the first capital letter standing alone ("B", not the "I"
// of "It"). ok is false when there is none.
func Choice(output string) (string, bool) {
	t := strings.Trim(strings.TrimSpace(output), "()[].:*")
	if len(t) == 1 && unicode.IsLetter(rune(t[0])) {
		return strings.ToUpper(t), true
	}
	if m := choiceSaid.FindStringSubmatch(output); m != nil {
		return strings.ToUpper(m[1]), true
	}
	if m := choiceAlone.FindStringSubmatch(output); m != nil {
		return m[1], true
	}
	return "", false
}

// FirstNumber is the first number written in output: an optional sign, digits with optional
// thousands commas ("1,234"), an optional fraction and exponent. ok is false when there is
// none.
func FirstNumber(output string) (float64, bool) {
	m := firstNumber.FindString(output)
	if m == "" {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	return n, err == nil
}
