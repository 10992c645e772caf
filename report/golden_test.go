package report

import (
	"bytes"
	"strings"
	"testing"

	"servebench/compare"
	"servebench/metrics"
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
		golden(t, "repeat."+name+".golden", b.Bytes())
	}
	for _, name := range []string{"csv", "html"} {
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
		if !strings.Contains(s, "repeat 3 of 3") || !strings.Contains(s, "the summary below is run 2's") {
			t.Errorf("%s: no run table with the runs' labels:\n%s", name, s)
		}
	}
}

// TestJSONIsTheLastRun checks that json of a file of several runs is its last run's summary.
func TestJSONIsTheLastRun(t *testing.T) {
	in := fileInput(t, "repeat.jsonl")
	runs, err := in.summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	if err := JSON(&want, in.Header, runs[len(runs)-1].Summary); err != nil {
		t.Fatal(err)
	}
	if err := Render(&got, "json", Input{Header: in.Header, Summaries: []metrics.RunSummary{runs[len(runs)-1]}}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("json of the last run differs from JSON of its summary")
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
			t.Errorf("%s comes before what should precede it", s)
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
