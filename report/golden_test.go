package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"servebench/compare"
)

// TestEveryFormatGolden renders every registered format of every fixture records file, as
// `servebench report FILE --format F` does, against testdata/golden/FILE.F.golden.
func TestEveryFormatGolden(t *testing.T) {
	for _, sp := range fixtureSpecs {
		for _, name := range Formats() {
			stem := strings.TrimSuffix(sp.file, ".jsonl")
			t.Run(stem+"/"+name, func(t *testing.T) {
				var b bytes.Buffer
				if err := Render(&b, name, fileInput(t, sp.file)); err != nil {
					t.Fatal(err)
				}
				golden(t, stem+"."+name+".golden", b.Bytes())
			})
		}
	}
}

// TestTwoInputHTMLGolden draws a base and a candidate file on one page, as
// `servebench report base.jsonl cand.jsonl --format html` does.
func TestTwoInputHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "html", fileInput(t, "base.jsonl"), fileInput(t, "cand.jsonl")); err != nil {
		t.Fatal(err)
	}
	golden(t, "base+cand.html.golden", b.Bytes())
}

// TestTwoInputMarkdownGolden is the compare page in Markdown, for a PR comment: one run a
// side, and three runs against the same three.
func TestTwoInputMarkdownGolden(t *testing.T) {
	for _, pair := range [][2]string{{"base", "cand"}, {"repeat", "repeat"}} {
		var b bytes.Buffer
		if err := Render(&b, "md", fileInput(t, pair[0]+".jsonl"), fileInput(t, pair[1]+".jsonl")); err != nil {
			t.Fatal(err)
		}
		golden(t, pair[0]+"+"+pair[1]+".md.golden", b.Bytes())
	}
}

// TestCompareFormatsGolden renders every comparison format of two pairs of fixture files: one
// run a side (block bootstrap) and three runs a side (Mann-Whitney U).
func TestCompareFormatsGolden(t *testing.T) {
	for _, pair := range [][2]string{{"base", "cand"}, {"repeat", "repeat"}} {
		for _, name := range CompareFormats() {
			t.Run(pair[0]+"-"+pair[1]+"/"+name, func(t *testing.T) {
				base, cand := fileSide(t, pair[0]+".jsonl"), fileSide(t, pair[1]+".jsonl")
				res := compare.Compare(base, cand, compare.Options{Goodput: true})
				var b bytes.Buffer
				if err := RenderCompare(&b, name, res, pair[0]+".jsonl", pair[1]+".jsonl"); err != nil {
					t.Fatal(err)
				}
				golden(t, "compare_"+pair[0]+"_"+pair[1]+"."+name+".golden", b.Bytes())
			})
		}
	}
}

// TestSummariesInput checks the input `run` hands over (summaries, no records): the formats of
// summaries render it as from the file, and those that need the records say so.
func TestSummariesInput(t *testing.T) {
	in := fileInput(t, "repeat.jsonl")
	runs, err := in.summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	done := Input{Label: in.Label, Header: in.Header, Summaries: runs}
	for _, name := range []string{"text", "json", "md", "gobench"} {
		var b bytes.Buffer
		if err := Render(&b, name, done); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "json" || name == "gobench" {
			golden(t, "repeat."+name+".golden", b.Bytes())
			continue
		}
		if *update {
			continue // TestEveryFormatGolden writes the file's text and md, with the block
		}
		// text and md from summaries are the file's less its "over the runs" block, whose
		// intervals need every request (repeatedRuns)
		want, err := os.ReadFile(filepath.Join("testdata", "golden", "repeat."+name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		want = overRunsRE.ReplaceAll(want, nil)
		if !bytes.Equal(b.Bytes(), want) || bytes.Equal(want, mustRead(t, "repeat."+name+".golden")) {
			t.Errorf("%s from summaries is not the file's report less its over-the-runs block:\n%s", name, b.Bytes())
		}
	}
	for _, name := range []string{"csv", "html", "vllm"} {
		if err := Render(&bytes.Buffer{}, name, done); err == nil || !strings.Contains(err.Error(), "needs the records") {
			t.Errorf("%s without records: err %v", name, err)
		}
	}
}

// TestRunTableOnlyForSeveralRuns checks that a one-run file prints its summary alone and a
// file of several runs the run table first, in text and Markdown.
func TestRunTableOnlyForSeveralRuns(t *testing.T) {
	for _, name := range []string{"text", "md"} {
		var one, three bytes.Buffer
		if err := Render(&one, name, fileInput(t, "base.jsonl")); err != nil {
			t.Fatal(err)
		}
		if err := Render(&three, name, fileInput(t, "repeat.jsonl")); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(one.String(), "the summary below is run") {
			t.Errorf("%s: a one-run file got a run table:\n%s", name, one.String())
		}
		s := three.String()
		if !strings.Contains(s, "repeat 3 of 3") || !strings.Contains(s, "the summary below is run 3's") {
			t.Errorf("%s: no run table with the runs' labels:\n%s", name, s)
		}
	}
}

// TestJSONRuns checks the JSON of a file of several runs: the top level is the last run's
// JSON (the keys a one-run reader expects, with the same values) plus summary_run and runs,
// which holds every run with its own figures; and a one-run file's JSON has no runs key.
func TestJSONRuns(t *testing.T) {
	in := fileInput(t, "repeat.jsonl")
	runs, err := in.summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	var lastOnly, all bytes.Buffer
	if err := JSON(&lastOnly, in.Header, runs[len(runs)-1].Summary); err != nil {
		t.Fatal(err)
	}
	if err := Render(&all, "json", Input{Header: in.Header, Summaries: runs}); err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := json.Unmarshal(lastOnly.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(all.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("top-level %s = %v, want the last run's %v", k, got[k], v)
		}
	}
	if got["summary_run"] != 2.0 {
		t.Errorf("summary_run = %v, want 2", got["summary_run"])
	}
	list, _ := got["runs"].([]any)
	if len(list) != 3 {
		t.Fatalf("runs has %d entries, want 3", len(list))
	}
	for i, e := range list {
		r := e.(map[string]any)
		s := runs[i].Summary
		if r["run"] != float64(i) || r["label"] != runs[i].Label || r["completed"] != float64(s.Completed) ||
			r["request_throughput"] != *s.RequestThroughput || r["max_concurrency"] != 4.0 || r["request_rate"] != "inf" {
			t.Errorf("runs[%d] = run %v label %v completed %v req/s %v max_concurrency %v request_rate %v",
				i, r["run"], r["label"], r["completed"], r["request_throughput"], r["max_concurrency"], r["request_rate"])
		}
		if _, ok := r["mean_ttft_ms"]; !ok {
			t.Errorf("runs[%d] has no mean_ttft_ms", i)
		}
	}

	var one bytes.Buffer
	base := fileInput(t, "base.jsonl")
	baseRuns, err := base.summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	if err := Render(&one, "json", Input{Header: base.Header, Summaries: baseRuns}); err != nil {
		t.Fatal(err)
	}
	var single bytes.Buffer
	if err := JSON(&single, base.Header, baseRuns[0].Summary); err != nil {
		t.Fatal(err)
	}
	if one.String() != single.String() || strings.Contains(one.String(), `"runs"`) {
		t.Error("a one-run file's json is not JSON of its summary, or has a runs key")
	}
}

// TestHTMLReadingOrder checks the page's order: the SIMULATED banner and the warnings, then
// the summary and latency tables, then the charts, and last the conditions, folded.
func TestHTMLReadingOrder(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "html", fileInput(t, "base.jsonl")); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	at := -1
	for _, s := range []string{`id="simulated"`, "SIMULATED: these figures were measured against servebench&#39;s built-in simulator, not a real server.",
		`id="warnings"`, `class="warnings"`, `class="runs"`, `id="summary"`, `id="latency"`, `id="ttft-cdf"`,
		`id="inflight-time"`, `<details id="conditions-details">`, `id="conditions"`, "</details>"} {
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("page lacks %s", s)
		}
		if i < at {
			// a later one may follow (the steady verdict's trace is a </details> too)
			if j := strings.Index(page[at:], s); j >= 0 {
				i = at + j
			} else {
				t.Errorf("%s comes before what should precede it", s)
			}
		}
		at = i
	}
	if !strings.Contains(page, `<td class="load"><code>4 users (closed loop)`) || !strings.Contains(page, "td.load code { word-break:normal") {
		t.Error("the load cell is not styled to wrap between words only")
	}
}

// TestHTMLConditionsOpenWhenTheyDiffer checks that the folded conditions open by themselves
// when base and candidate differ in one.
func TestHTMLConditionsOpenWhenTheyDiffer(t *testing.T) {
	base, cand := synthRun(1, 20, 80, "base"), synthRun(2, 20, 80, "candidate")
	var b bytes.Buffer
	if err := HTMLRuns(&b, []Run{base, cand}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<details id="conditions-details" open>`) {
		t.Error("conditions that differ are folded away")
	}
}

// overRunsRE is the "over the runs" block of a text or md report of a --repeat file.
var overRunsRE = regexp.MustCompile(`\nover the \d+ runs\n(  [^\n]*\n)+|\n### over the \d+ runs\n\n(\|[^\n]*\n)+`)

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
