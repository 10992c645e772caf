package report

import (
	"bytes"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// TestRunVerdicts: the block says steady or not, valid or not, and grades the measurement by
// its worst warning; the single-run page opens with it, before the warnings.
func TestRunVerdicts(t *testing.T) {
	s := &metrics.Summary{
		Steadiness: &metrics.Steadiness{Tested: true, Drifts: []metrics.Drift{{Metric: "ttft", Direction: "rose"}}},
		Warnings:   []metrics.Warning{{Level: metrics.Info, Text: "a"}, {Level: metrics.Distorts, Text: "b"}},
		Ends:       []record.RunEnd{{Validity: &record.Validity{Verdict: "INVALID", Rules: "custom"}}},
	}
	got := runVerdicts(s)
	want := []verdictLine{
		{Label: "steady", Text: "NOT STEADY: ttft rose during the window (see the warnings)", Class: "bad"},
		{Label: "valid", Text: "INVALID (custom)", Class: "bad"},
		{Label: "quality", Text: "fair: 1 warning may distort a figure (2 warnings in all)", Class: "unsure"},
	}
	for i := range want {
		if got[i].Label != want[i].Label || got[i].Text != want[i].Text || got[i].Class != want[i].Class {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	steady := &metrics.Summary{Steadiness: &metrics.Steadiness{Tested: true, Steady: true, Windows: 8,
		Series: []metrics.SeriesCheck{{Metric: "ttft", Tested: true}}}, Warnings: []metrics.Warning{{Level: metrics.Info, Text: "a"}}}
	if v := runVerdicts(steady); v[0].Class != "good" || v[1].Class != "unsure" || v[2].Class != "good" {
		t.Errorf("a steady run with information only: %+v", v)
	}
	if v := qualityVerdict([]metrics.Warning{{Level: metrics.Invalidates}, {Level: metrics.Distorts}}); v.Class != "bad" || !strings.HasPrefix(v.Text, "poor: 1 warning invalidates") {
		t.Errorf("quality with an invalidating warning: %+v", v)
	}
	var page bytes.Buffer
	if err := HTML(&page, header(false), s, nil); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if i, j := strings.Index(h, `id="run-verdict"`), strings.Index(h, `id="warnings"`); i < 0 || i > j || !strings.Contains(h, "NOT STEADY") {
		t.Errorf("the page does not open with the verdict block (at %d, warnings at %d)", i, j)
	}
}

// TestSteadyExplain: with Explain the text report ends with the steady check's trace, each
// step numbered by its place in metrics.SteadyPolicy; without it, none; the HTML page carries
// it folded under the verdict.
func TestSteadyExplain(t *testing.T) {
	in := fileInput(t, "base.jsonl")
	in.Explain = true
	var b bytes.Buffer
	if err := Render(&b, "text", in); err != nil {
		t.Fatal(err)
	}
	want := "why steady: the rules of policy " + metrics.SteadyPolicy.Version
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "→ 1 too-few-requests: not tested (completed 22, min_requests 40)") {
		t.Errorf("text --explain lacks the trace:\n%s", b.String())
	}
	var plain, page bytes.Buffer
	if err := Render(&plain, "text", fileInput(t, "base.jsonl")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "why steady") || !strings.Contains(plain.String(), "[policy "+metrics.SteadyPolicy.Version+"]") {
		t.Errorf("text without --explain: want the policy's version and no trace:\n%s", plain.String())
	}
	if err := Render(&page, "html", fileInput(t, "base.jsonl")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<details class="why"><summary>why: the rules that fired`) {
		t.Error("the HTML page does not fold the steady trace under its verdict")
	}
}
