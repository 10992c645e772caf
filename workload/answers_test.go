package workload

import (
	"strings"
	"testing"
)

func TestAnswerScore(t *testing.T) {
	for _, tc := range []struct {
		line, output string
		want         bool
	}{
		{`{"prompt":"q","answer":"Paris"}`, "  paris \n", true},
		{`{"prompt":"q","answer":"Paris"}`, "Paris, France", false},
		{`{"prompt":"q","answer":"Paris","match":"exact"}`, "not Paris", false},
		{`{"prompt":"q","answer":"B","match":"choice"}`, "B", true},
		{`{"prompt":"q","answer":"B","match":"choice"}`, "(b)", true},
		{`{"prompt":"q","answer":"B","match":"choice"}`, "I think the answer is B.", true},
		{`{"prompt":"q","answer":"B","match":"choice"}`, "The answer is C.", false},
		{`{"prompt":"q","answer":"B","match":"choice"}`, "It must be B because A is wrong", true},
		{`{"prompt":"q","answer":"B","match":"choice"}`, "none of them", false},
		{`{"prompt":"q","answer":42,"match":"number"}`, "The answer is 42.", true},
		{`{"prompt":"q","answer":42,"match":"number"}`, "42.0", true},
		{`{"prompt":"q","answer":42,"match":"number"}`, "43", false},
		{`{"prompt":"q","answer":"1234","match":"number"}`, "It is 1,234 apples, not 12", true},
		{`{"prompt":"q","answer":-33,"match":"number"}`, "The answer is -33.", true},
		{`{"prompt":"q","answer":3.14,"match":"number","tolerance":0.01}`, "about 3.142", true},
		{`{"prompt":"q","answer":3.14,"match":"number","tolerance":0.01}`, "3.16", false},
		{`{"prompt":"q","answer":1,"match":"number"}`, "no number here", false},
		{`{"prompt":"q","answer":"\\b(11|13)\\b","match":"regex"}`, "I pick 13.", true},
		{`{"prompt":"q","answer":"\\b(11|13)\\b","match":"regex"}`, "I pick 113.", false},
	} {
		reqs, err := Read(strings.NewReader(tc.line), "t.jsonl", 16)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		a := reqs[0].Answer
		if a == nil {
			t.Fatalf("%s: no answer key", tc.line)
		}
		if got := a.Score(tc.output); got != tc.want {
			t.Errorf("%s scored %q: got %v, want %v", tc.line, tc.output, got, tc.want)
		}
	}
}

func TestAnswerKeyErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"prompt":"q","answer":"B","match":"choice2"}`, `"match" "choice2"`},
		{`{"prompt":"q","answer":"BC","match":"choice"}`, "one letter"},
		{`{"prompt":"q","answer":"x","match":"number"}`, "not a number"},
		{`{"prompt":"q","answer":"(","match":"regex"}`, "not a regular expression"},
		{`{"prompt":"q","answer":"a","tolerance":1}`, `"tolerance" goes with`},
		{`{"prompt":"q","answer":1,"match":"number","tolerance":-1}`, `"tolerance" -1`},
		{`{"prompt":"q","match":"exact"}`, `need an "answer"`},
		{`{"prompt":"q","answer":true}`, "a string or a number"},
		{`{"prompt":"q","answer":"  "}`, "must not be empty"},
	} {
		_, err := Read(strings.NewReader(tc.line), "t.jsonl", 16)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.jsonl:1") {
			t.Errorf("%s: got %v, want an error naming the line and %q", tc.line, err, tc.want)
		}
	}
}

// A saved workload keeps its answer keys, so --save-workload and run --like replay them.
func TestAnswerKeySurvivesSave(t *testing.T) {
	in := `{"prompt":"q","answer":3.14,"match":"number","tolerance":0.01}` + "\n" + `{"messages":[{"role":"user","content":"x"}],"answer":"C","match":"choice"}` + "\n"
	reqs, err := Read(strings.NewReader(in), "t.jsonl", 16)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := encodeAll(&b, reqs); err != nil {
		t.Fatal(err)
	}
	back, err := Read(strings.NewReader(b.String()), "saved.jsonl", 16)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		a, c := reqs[i].Answer, back[i].Answer
		if c == nil || a.Value != c.Value || a.Match != c.Match || a.Tolerance != c.Tolerance {
			t.Errorf("request %d: answer key %+v saved and read back as %+v", i, a, c)
		}
	}
	if !back[0].Answer.Score("3.145") || back[0].Answer.Score("3.2") {
		t.Error("the read-back key does not score as the original")
	}
}

// The bundled example file parses, and every item has a key.
func TestExampleAnswersFile(t *testing.T) {
	reqs, err := ReadFile("../docs/examples/answers.jsonl", 16)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]int{}
	for _, r := range reqs {
		if r.Answer == nil {
			t.Fatalf("request %d has no answer", r.ID)
		}
		rules[r.Answer.Match]++
	}
	if len(reqs) < 40 || len(rules) != len(MatchRules) {
		t.Errorf("example file: %d items, rules %v; want about 50 covering every rule", len(reqs), rules)
	}
}
