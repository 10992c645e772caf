package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Answers and structured output. With --answers FILE the simulator holds the answer key of a
// servebench answers dataset (the same file the run reads): a request whose prompt is in it
// is answered from the key, right or, for a seeded share --answer-error of requests, wrong. A
// request asking for response_format (json_object or json_schema) is answered with a JSON
// document generated from its schema (jsongen.go), broken for a seeded share --invalid-json.
// Either way the answer is the whole output: the stream ends after it, as a model ends with
// its end-of-sequence token (ignore_eos and min_tokens do not lengthen it; max_tokens cuts
// it). Each request draws on its own (a hash of the seed, its X-Request-Id and its prompt),
// as a model sampled at temperature > 0: the same item sent twice may be answered right once
// and wrong once. The file is parsed by the simulator's own code, never servebench's.

// Answers configures the answer key and the structured-output faults.
type Answers struct {
	AnswersFile string  // JSONL answers file: {"prompt" or "messages", "answer", "match"}
	AnswerError float64 // share of keyed requests answered wrong
	InvalidJSON float64 // share of structured-output answers that break the schema
}

func bindAnswerFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.AnswersFile, "answers", c.AnswersFile, `answer key: a servebench answers file (JSONL of {"prompt" or "messages", "answer", "match"}); a request whose prompt is in it is answered from it`)
	fs.Float64Var(&c.AnswerError, "answer-error", c.AnswerError, "share of --answers requests answered wrong (seeded by --seed and each request's X-Request-Id)")
	fs.Float64Var(&c.InvalidJSON, "invalid-json", c.InvalidJSON, "share of response_format answers that break their schema: half cut short (not JSON), half with a property of the wrong type (cut when there is none)")
}

func (c *Config) validateAnswers() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"--answer-error", c.AnswerError}, {"--invalid-json", c.InvalidJSON}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("%s %v: want a share in [0, 1]", f.name, f.v)
		}
	}
	return nil
}

// keyEntry is one answer of the key.
type keyEntry struct {
	answer string
	match  string
	tol    float64
	re     *regexp.Regexp
}

// answerKey maps a prompt, as the simulator reads it (promptText: a chat request's message
// contents joined by spaces), to its answer.
type answerKey map[string]*keyEntry

// loadAnswerKey reads an answers file; "" is no key.
func loadAnswerKey(path string) (answerKey, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--answers: %w", err)
	}
	defer f.Close()
	key := answerKey{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		text, e, err := parseKeyLine(line)
		if err != nil {
			return nil, fmt.Errorf("--answers %s:%d: %v", path, n, err)
		}
		key[text] = e
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--answers %s: %w", path, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("--answers %s: no answers", path)
	}
	return key, nil
}

func parseKeyLine(line []byte) (string, *keyEntry, error) {
	var l struct {
		Prompt    *string         `json:"prompt"`
		Messages  []chatMessage   `json:"messages"`
		Answer    json.RawMessage `json:"answer"`
		Match     string          `json:"match"`
		Tolerance float64         `json:"tolerance"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return "", nil, err
	}
	g := genRequest{Messages: l.Messages}
	if l.Prompt != nil {
		raw, _ := json.Marshal(*l.Prompt)
		g.Prompt = raw
	}
	text, _, err := g.promptText(len(l.Messages) > 0)
	if err != nil {
		return "", nil, err
	}
	e := &keyEntry{match: strings.ToLower(l.Match), tol: l.Tolerance}
	if e.match == "" {
		e.match = "exact"
	}
	if err := json.Unmarshal(l.Answer, &e.answer); err != nil {
		var n json.Number
		if json.Unmarshal(l.Answer, &n) != nil {
			return "", nil, errors.New(`"answer": want a string or a number`)
		}
		e.answer = n.String()
	}
	if e.match == "regex" {
		if e.re, err = regexp.Compile(e.answer); err != nil {
			return "", nil, err
		}
	}
	return text, e, nil
}

// Draw domains: the wrong-answer and the broken-JSON draws of one request are independent.
const (
	domainWrong  uint64 = 0x77726f6e67616e73
	domainBroken uint64 = 0x62726f6b656e6a73
)

// draw is request id's uniform draw in [0, 1) in domain, from the prompt's hash (textSeed,
// which holds the seed). The id's hash goes through mix64 before it meets textSeed: XORing
// mix64(seed) in again, as a first version did, cancelled the seed out of textSeed, so every
// seed drew the same requests wrong.
func (s *Server) draw(id string, textSeed, domain uint64) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(mix64(mix64(h.Sum64()^domain)^textSeed)>>11) / (1 << 53)
}

// planAnswer decides the request's answer text, when it has one (an answer-key prompt or a
// response_format), and makes the output its length. It runs before the request is admitted.
func (s *Server) planAnswer(p *genParams, id string) {
	var text string
	switch {
	case p.key != nil:
		text = keyedAnswer(p.key, s.draw(id, p.textSeed, domainWrong) < s.cfg.AnswerError)
	case p.format != nil:
		d := s.draw(id, p.textSeed, domainBroken)
		text = structuredAnswer(p.format, d < s.cfg.InvalidJSON, d < s.cfg.InvalidJSON/2)
	default:
		return
	}
	p.answer = answerPieces(text)
	p.target = min(len(p.answer), p.maxTok)
}

// keyedAnswer is the text of a right (or wrong) answer to e, as a model would write it.
func keyedAnswer(e *keyEntry, wrong bool) string {
	switch e.match {
	case "choice":
		c := strings.ToUpper(strings.TrimSpace(e.answer))
		if wrong {
			c = otherChoice(c)
		}
		return "The answer is " + c + "."
	case "number":
		v := strings.TrimSpace(e.answer)
		if wrong {
			n, _ := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64)
			v = strconv.FormatFloat(n+max(1, 10*e.tol+1), 'f', -1, 64)
		}
		return "The answer is " + v + "."
	case "regex":
		right := sampleMatch(e.re)
		if wrong {
			for _, w := range []string{"I do not know.", "?", "-", ""} {
				if !e.re.MatchString(w) {
					return w
				}
			}
		}
		return right
	}
	if wrong {
		return "not " + e.answer
	}
	return e.answer
}

// otherChoice is a wrong choice letter: the next of A to D (D goes back to A), or the one
// before a letter past D.
func otherChoice(c string) string {
	if c == "" {
		return "A"
	}
	switch l := c[0]; {
	case l < 'A' || l > 'Z':
		return "A"
	case l < 'D':
		return string(l + 1)
	case l == 'D':
		return "A"
	default:
		return string(l - 1)
	}
}

// answerPieces splits text into tokens of up to 4 bytes (on rune boundaries), each already
// escaped for a JSON string: the stream appends them as they are.
func answerPieces(text string) []string {
	var out []string
	for len(text) > 0 {
		n := min(4, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		b := appendJSONString(nil, text[:n])
		out = append(out, string(b[1:len(b)-1]))
		text = text[n:]
	}
	if len(out) == 0 {
		out = []string{""} // an empty answer is still one (empty) token
	}
	return out
}

// appendText appends the text of output tokens [st.textFrom, st.written): the answer's
// pieces when the request has one (nothing past its end), else the seeded words.
func (st *streamer) appendText(b []byte) []byte {
	for i := st.textFrom; i < st.written; i++ {
		if st.answer != nil {
			if i < len(st.answer) {
				b = append(b, st.answer[i]...)
			}
			continue
		}
		b = append(b, outputPieces[outputWord(st.q.textSeed, i)]...)
	}
	return b
}

// answerText is the whole answer of a non-streamed response, unescaped.
func answerText(pieces []string, n int) string {
	var b strings.Builder
	for _, p := range pieces[:min(n, len(pieces))] {
		var s string
		_ = json.Unmarshal([]byte(`"`+p+`"`), &s) // pieces were escaped by appendJSONString
		b.WriteString(s)
	}
	return b.String()
}

// answerFor looks up the prompt in the answer key and reads the request's response format.
func (s *Server) answerFor(text string, format json.RawMessage) (*keyEntry, *responseFormat, error) {
	f, err := parseResponseFormat(format)
	if err != nil {
		return nil, nil, err
	}
	return s.answers[text], f, nil
}
