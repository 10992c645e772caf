package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"servebench/schema"
	"servebench/workload"
)

// The simulator's own parse of the key must agree with servebench's scoring: each answer it
// gives as right scores right and each it gives as wrong scores wrong (workload.Answer is
// the scorer the run uses; the test only joins the two sides).
func TestKeyedAnswersScoreAsDrawn(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	reqs, err := workload.ReadFile("../docs/examples/answers.jsonl", 16)
	if err != nil {
		t.Fatal(err)
	}
	key, err := loadAnswerKey("../docs/examples/answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		text := r.Prompt
		if len(r.Messages) > 0 {
			text = r.Messages[0].Content
		}
		e := key[text]
		if e == nil {
			t.Fatalf("request %d: its prompt is not in the simulator's key", r.ID)
		}
		for _, wrong := range []bool{false, true} {
			out := keyedAnswer(e, wrong)
			if got := r.Answer.Score(answerText(answerPieces(out), 1<<20)); got == wrong {
				t.Errorf("request %d (%s %q): the simulator's answer %q (wrong %v) scored %v", r.ID, r.Answer.Match, r.Answer.Value, out, wrong, got)
			}
		}
	}
}

// Generated instances meet their schema, and broken ones do not, over schemas with the
// constructs structured-output servers take.
func TestStructuredAnswersMeetTheirSchema(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	schemas := []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer","minimum":3,"maximum":9}},"required":["answer","n"],"additionalProperties":false}`,
		`{"type":"object","properties":{"when":{"type":"string","format":"date"},"mail":{"type":"string","format":"email"},"code":{"type":"string","pattern":"^[A-Z]{3}-\\d{2}$"},"tags":{"type":"array","items":{"type":"string","minLength":4},"minItems":2,"maxItems":3}},"required":["when","mail","code","tags"]}`,
		`{"type":"object","properties":{"kind":{"enum":["a","b"]},"x":{"type":["number","null"],"exclusiveMinimum":0.5},"ok":{"type":"boolean"},"c":{"const":7}},"required":["kind","x","ok","c"]}`,
		`{"$defs":{"step":{"type":"object","properties":{"say":{"type":"string","maxLength":3}},"required":["say"]}},"type":"object","properties":{"steps":{"type":"array","items":{"$ref":"#/$defs/step"}},"first":{"$ref":"#/$defs/step"},"alt":{"anyOf":[{"type":"integer","multipleOf":5,"minimum":11},{"type":"string"}]}},"required":["steps","first","alt"]}`,
	}
	raw, err := os.ReadFile("../docs/examples/answer-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	schemas = append(schemas, string(raw))
	for i, src := range schemas {
		sch, err := schema.Compile(fmt.Sprint("s", i), []byte(src))
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		f, err := parseResponseFormat(json.RawMessage(`{"type":"json_schema","json_schema":{"name":"t","schema":` + src + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		if out := structuredAnswer(f, false, false); sch.Validate([]byte(out)) != nil {
			t.Errorf("schema %d: generated %s: %v", i, out, sch.Validate([]byte(out)))
		}
		for _, cut := range []bool{false, true} {
			if out := structuredAnswer(f, true, cut); sch.Validate([]byte(out)) == nil {
				t.Errorf("schema %d: broken (cut %v) answer %s meets the schema", i, cut, out)
			}
		}
	}
}

func TestSampleMatch(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	for _, p := range []string{`\b(11|13|17|19)\b`, `^\d{4}-\d{2}-\d{2}$`, `(?i)^\s*(yes|no)\b`, `[a-c]+x?`, `colou?r`, `.+@.+`} {
		re := regexp.MustCompile(p)
		if s := sampleMatch(re); !re.MatchString(s) {
			t.Errorf("sampleMatch(%s) = %q does not match", p, s)
		}
	}
}

// Over HTTP: --answer-error and --invalid-json give their share of wrong and broken answers
// (each request its own draw, by its X-Request-Id), the stream ends after the answer (finish
// "stop", usage counting its tokens), and 0 gives none.
func TestAnswerSharesOverHTTP(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	dir := t.TempDir()
	key := filepath.Join(dir, "key.jsonl")
	if err := os.WriteFile(key, []byte(`{"prompt":"What is 6 * 7?","answer":42,"match":"number"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := fixedConfig(time.Millisecond, 0)
	c.AnswersFile, c.AnswerError, c.InvalidJSON = key, 0.3, 0.2
	_, base := startSim(t, c)
	sch, _ := schema.Compile("s", []byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
	format := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "s", "schema": map[string]any{
		"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []string{"a"}}}}
	const n = 400
	wrong, broken := 0, 0
	for i := range n {
		id := fmt.Sprintf("0-%d", i)
		body := map[string]any{"messages": []map[string]string{{"role": "user", "content": "What is 6 * 7?"}}, "max_tokens": 64, "stream": true,
			"stream_options": map[string]any{"include_usage": true}}
		d := streamText(t, base+"/v1/chat/completions", body, id)
		if !strings.Contains(d.text, "42") {
			wrong++
		}
		finish, completion := "", -1
		for _, c := range d.chunks {
			if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
				finish = *c.Choices[0].FinishReason
			}
			if c.Usage != nil {
				completion = c.Usage.Completion
			}
		}
		if finish != "stop" || completion != len(answerPieces(d.text)) {
			t.Fatalf("request %d: the answer %q ended with %q after %d tokens, want stop after %d", i, d.text, finish, completion, len(answerPieces(d.text)))
		}
		body = map[string]any{"messages": []map[string]string{{"role": "user", "content": "something else " + id}}, "max_tokens": 64, "stream": true,
			"response_format": format}
		if sch.Validate([]byte(streamText(t, base+"/v1/chat/completions", body, id).text)) != nil {
			broken++
		}
	}
	if w, b := float64(wrong)/n, float64(broken)/n; w < 0.22 || w > 0.38 || b < 0.13 || b > 0.27 {
		t.Errorf("wrong %.3f (want 0.3), broken %.3f (want 0.2) over %d requests", w, b, n)
	}
}

// streamText posts body with X-Request-Id id and decodes the stream.
func streamText(t *testing.T, url string, body any, id string) decoded {
	t.Helper()
	resp := post(t, url, body, "X-Request-Id", id)
	defer resp.Body.Close()
	evs, err := readSSE(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	return decode(t, evs)
}

func TestAnswerFlagsRefused(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := fixedConfig(time.Millisecond, 0)
	c.AnswerError = 1.5
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "--answer-error") {
		t.Errorf("--answer-error 1.5: got %v", err)
	}
	c = fixedConfig(time.Millisecond, 0)
	c.AnswersFile = filepath.Join(t.TempDir(), "missing.jsonl")
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "--answers") {
		t.Errorf("missing --answers file: got %v", err)
	}
}

// Each seed draws its own requests wrong, at the share asked: two seeds' wrong sets overlap
// as independent draws do (about share² of requests), not wholly (a first version's seeds
// cancelled out, so every run of a file got the very same answers wrong).
func TestAnswerDrawsDependOnTheSeed(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	const n, share = 4000, 0.2
	wrongs := map[int64][]bool{}
	for _, seed := range []int64{1, 2, 3} {
		s := &Server{cfg: Config{Seed: seed}}
		k := 0
		for i := range n {
			w := s.draw(fmt.Sprintf("0-%d", i), hashPrompt(fmt.Sprint("item ", i%50), 0, seed), domainWrong) < share
			wrongs[seed] = append(wrongs[seed], w)
			if w {
				k++
			}
		}
		if got := float64(k) / n; got < share-0.02 || got > share+0.02 {
			t.Errorf("seed %d: %.3f wrong, want %.2f", seed, got, share)
		}
	}
	both := 0
	for i := range n {
		if wrongs[1][i] && wrongs[2][i] {
			both++
		}
	}
	if got := float64(both) / n; got > share*share+0.02 {
		t.Errorf("seeds 1 and 2 drew %.3f of requests wrong both times, want about %.2f", got, share*share)
	}
}
