package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/sim"
)

const (
	exampleAnswers = "../../docs/examples/answers.jsonl"
	exampleSchema  = "../../docs/examples/answer-schema.json"
)

// answersSummary is the part of the JSON summary these tests read.
type answersSummary struct {
	Completed     int      `json:"completed"`
	GoodRequests  int      `json:"good_requests"`
	RequestGoodpt *float64 `json:"request_goodput"`
	Answers       *struct {
		Scored       int      `json:"scored"`
		Correct      int      `json:"correct"`
		Accuracy     *float64 `json:"accuracy"`
		Lo           *float64 `json:"accuracy_ci_low"`
		Hi           *float64 `json:"accuracy_ci_high"`
		Checked      int      `json:"schema_checked"`
		Invalid      int      `json:"schema_invalid"`
		InvalidShare *float64 `json:"invalid_share"`
		Wrong        []struct {
			Answer, Expected string
		} `json:"wrong_examples"`
		InvalidEx []struct {
			Answer, Violation string
		} `json:"invalid_examples"`
	} `json:"answers"`
}

// runAnswers runs servebench against url with args and returns the JSON summary and the
// measured records.
func runAnswers(t *testing.T, url string, args ...string) (answersSummary, []recordView) {
	t.Helper()
	dir := t.TempDir()
	out, js := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "s.json")
	args = append([]string{"run", "--url", url, "-o", out, "--json", js, "-q", "--concurrency", "16", "--warmup", "0"}, args...)
	if code, _, stderr := runMain(t, args...); code != 0 {
		t.Fatalf("servebench %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var s answersSummary
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Answers == nil {
		t.Fatalf("the summary has no answers object: %s", b)
	}
	_, recs := readRecords(t, out)
	var views []recordView
	for _, r := range recs {
		if r.Measured() {
			views = append(views, recordView{correct: r.Correct, valid: r.SchemaValid, violation: r.SchemaError, answer: r.Answer, expected: r.Expected})
		}
	}
	return s, views
}

type recordView struct {
	correct, valid              *bool
	violation, answer, expected string
}

// Invalid answers from the simulator (--invalid-json 0.1) are counted: every completed request
// checked, every invalid one named in its record, the summary's count and goodput the
// records'; with none broken, none is counted. 100 requests: the share the simulator breaks is
// its own test's (sim's TestAnswerSharesOverHTTP holds it over 400 draws), so here it is only
// held to be neither none nor far above 10% (0 of 100 has a chance of 3e-5). Before, 500
// requests were held to 10% ± 3 points, which the prompts' fresh nonce (its draws) missed
// about one run in 40.
func TestResponseFormatCountsInvalidAnswers(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.InvalidJSON = 0.1; c.TTFT = 0 })
	s, recs := runAnswers(t, url, "--response-format", "json-schema:"+exampleSchema, "--requests", "100", "--output-tokens", "200", "--slo", "correct")
	a := s.Answers
	if a.Checked != 100 || a.InvalidShare == nil || a.Invalid == 0 || *a.InvalidShare > 0.3 {
		t.Fatalf("checked %d, %d invalid: want 100 checked and some invalid, at most 30%%", a.Checked, a.Invalid)
	}
	invalid := 0
	for _, r := range recs {
		if r.valid == nil {
			t.Fatal("a completed request was not checked")
		}
		if !*r.valid {
			invalid++
			if r.violation == "" || r.answer == "" {
				t.Errorf("an invalid answer without its violation or text: %+v", r)
			}
		}
	}
	if invalid != a.Invalid || s.GoodRequests != 100-invalid || len(a.InvalidEx) == 0 {
		t.Errorf("records hold %d invalid, the summary %d, goodput counts %d good of 100 (want %d), %d examples", invalid, a.Invalid, s.GoodRequests, 100-invalid, len(a.InvalidEx))
	}

	url = startSim(t, func(c *sim.Config) { c.TTFT = 0 })
	s, _ = runAnswers(t, url, "--response-format", "json", "--requests", "20")
	if s.Answers.Checked != 20 || s.Answers.Invalid != 0 {
		t.Errorf("--invalid-json 0: %d of %d invalid, want none", s.Answers.Invalid, s.Answers.Checked)
	}
}

// Answers 20% wrong read as an accuracy whose interval holds 80%, and
// goodput with --slo correct counts exactly the right ones; with no error every answer is
// right, with every one wrong none is. The dataset's prompts carry no nonce, so the
// simulator's draws (by seed, request id and prompt) are the same every time: 100 requests
// (500 before) check the same wiring; the simulator's share is sim's TestAnswerSharesOverHTTP's.
func TestAnswersDatasetAccuracyAndGoodput(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.AnswersFile, c.AnswerError = exampleAnswers, 0.2 })
	s, recs := runAnswers(t, url, "--dataset", "answers:"+exampleAnswers, "--requests", "100", "--slo", "correct,ttft=1h")
	a := s.Answers
	if a.Scored != 100 || a.Accuracy == nil || !(*a.Lo <= 0.8 && 0.8 <= *a.Hi) {
		t.Fatalf("scored %d, accuracy %v [%v, %v]: want 100 scored and an interval holding 80%%", a.Scored, a.Accuracy, a.Lo, a.Hi)
	}
	right := 0
	for _, r := range recs {
		switch {
		case r.correct == nil:
			t.Fatal("a completed request was not scored")
		case *r.correct:
			right++
		case r.answer == "" || r.expected == "":
			t.Errorf("a wrong answer without its text or the key's: %+v", r)
		}
	}
	if right != a.Correct || s.GoodRequests != right || len(a.Wrong) == 0 {
		t.Errorf("records hold %d right, the summary %d, goodput counts %d good: want all equal (%d wrong examples)", right, a.Correct, s.GoodRequests, len(a.Wrong))
	}
	for _, e := range []struct {
		share float64
		want  int
	}{{0, 20}, {1, 0}} {
		url := startSim(t, func(c *sim.Config) { c.AnswersFile, c.AnswerError = exampleAnswers, e.share })
		s, _ := runAnswers(t, url, "--dataset", "answers:"+exampleAnswers, "--requests", "20")
		if s.Answers.Correct != e.want {
			t.Errorf("--answer-error %v: %d of 20 right, want %d", e.share, s.Answers.Correct, e.want)
		}
	}
}

// compare treats accuracy as a key metric: a candidate that answers worse regressed, whatever
// its latencies; the same server under another seed does not. The draws do not depend on the
// machine's load (the dataset's prompts carry no nonce): 200 requests a side (400 before).
func TestCompareJudgesAccuracy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(name string, share float64, seed int64) string {
		url := startSim(t, func(c *sim.Config) { c.AnswersFile, c.AnswerError, c.Seed = exampleAnswers, share, seed })
		out := filepath.Join(dir, name)
		if code, _, stderr := runMain(t, "run", "--url", url, "--dataset", "answers:"+exampleAnswers, "--requests", "200", "-o", out, "-q"); code != 0 {
			t.Fatalf("run %s: exit %d: %s", name, code, stderr)
		}
		return out
	}
	base, worse, same := run("base.jsonl", 0.2, 1), run("worse.jsonl", 0.4, 1), run("same.jsonl", 0.2, 2)
	code, out, stderr := runMain(t, "compare", base, worse)
	if (code != 4 && code != 9) || !strings.Contains(out+stderr, "accuracy regressed") || !strings.Contains(out+stderr, "regressed") {
		t.Errorf("compare to a candidate 20 points less accurate: exit %d, want 4 (or 9, provisional) and accuracy regressed:\n%s%s", code, out, stderr)
	}
	_, out, stderr = runMain(t, "compare", base, same)
	if strings.Contains(out+stderr, "accuracy regressed") || !strings.Contains(out+stderr, "accuracy: no significant change") {
		t.Errorf("compare of one accuracy under two seeds: want no significant change in accuracy:\n%s%s", out, stderr)
	}
}

func TestAnswersUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noKey := filepath.Join(dir, "nokey.jsonl")
	badSchema := filepath.Join(dir, "bad.json")
	os.WriteFile(noKey, []byte(`{"prompt":"q","answer":"a"}`+"\n"+`{"prompt":"r"}`+"\n"), 0o644)
	os.WriteFile(badSchema, []byte(`{"type": 12}`), 0o644)
	live := startSim(t, nil) // the dataset is read once the server answered
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "correct"}, "--slo correct needs"},
		{[]string{"--response-format", "xml"}, "want json or json-schema:FILE"},
		{[]string{"--response-format", "json-schema:" + filepath.Join(dir, "missing.json")}, "--response-format"},
		{[]string{"--response-format", "json-schema:" + badSchema}, "--response-format"},
		{[]string{"--response-format", "json", "--api", "ollama"}, "openai-chat or openai-completions"},
		{[]string{"--dataset", "answers:" + noKey, "--url", live}, `line 2 has no "answer"`},
		{[]string{"--response-format", "json", "--extra-body", `{"response_format":{"type":"text"}}`}, "choose one"},
	} {
		args := append([]string{"run", "--url", "http://127.0.0.1:1", "-o", filepath.Join(dir, "x.jsonl"), "--ready-timeout", "1s"}, tc.args...)
		code, _, stderr := runMain(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
