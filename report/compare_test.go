package report

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"servebench/compare"
	"servebench/conditions"
	"servebench/metrics"
	"servebench/record"
)

// fakeSide builds a side of `runs` runs of 16 requests each, sent 50 ms apart by 4 users, with
// ttft and itl in ms (itl grows by step·run so that runs differ a little) and 8 tokens each.
func fakeSide(runs int, ttft, itl, step float64, conds ...record.Condition) *compare.Side {
	h := &record.Header{Target: record.Target{Model: "m", API: "openai-completions"},
		Workload:   record.Workload{Hash: "sha256:abc", Source: "synthetic", Count: 20, Seed: 1},
		Config:     map[string]any{"concurrency": 4.0, "output_tokens": 8.0, "input_tokens": 32.0, "requests": 16.0},
		Conditions: conds}
	s := compare.NewSide(h, metrics.Options{})
	for run := range runs {
		base := int64(run) * 10e9
		for i := range 16 {
			sent := base + int64(i)*50e6
			first := sent + int64((ttft+float64(i%3)*0.1)*1e6)
			gap := int64((itl + step*float64(run) + float64(i%4)*0.01) * 1e6)
			r := record.Record{ID: i, Run: run, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent,
				OutputTokens: 8, OutputTokensSource: record.SourceServer}
			for k := range 8 {
				r.Events = append(r.Events, record.Event{T: first + int64(k)*gap, N: 1})
			}
			r.Done = r.Events[7].T + 1e5
			s.Add(&r)
		}
	}
	return s
}

func TestCompareTextGolden(t *testing.T) {
	gpu := func(v string) record.Condition {
		return record.Condition{Key: "gpu.name", Value: v, Source: "declared"}
	}
	cases := []struct {
		name       string
		base, cand *compare.Side
		opt        compare.Options
		verdict    string
	}{
		{"compare_regressed.golden", fakeSide(6, 20, 20, 0.01, gpu("L4")), fakeSide(6, 20, 25, 0.01, gpu("L4")), compare.Options{}, compare.Regressed},
		{"compare_same.golden", fakeSide(6, 20, 20, 0.01), fakeSide(6, 20, 20, 0.011), compare.Options{}, compare.NoChange},
		{"compare_not_comparable.golden", fakeSide(6, 20, 20, 0.01, gpu("L4")), fakeSide(6, 20, 20, 0.01, gpu("A100")), compare.Options{}, compare.NotComparable},
		{"compare_expected.golden", fakeSide(6, 20, 20, 0.01, gpu("L4")), fakeSide(6, 20, 15, 0.01, gpu("A100")), compare.Options{Expect: []string{"gpu"}}, compare.Improved},
		{"compare_one_run.golden", fakeSide(1, 20, 20, 0), fakeSide(1, 20, 25, 0), compare.Options{Rounds: 300}, compare.Regressed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := compare.Compare(tc.base, tc.cand, tc.opt)
			if res.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q", res.Verdict, tc.verdict)
			}
			var b bytes.Buffer
			if err := CompareText(&b, res, "base.jsonl", "cand.jsonl"); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestConditionsGolden(t *testing.T) {
	var s conditions.Set
	s.Add("model", "meta-llama/Llama-3.1-8B-Instruct", conditions.Detected)
	s.Add("server.family", "vllm", conditions.Detected)
	s.Add("server.version", "0.8.5.post1", conditions.Detected)
	s.Add("gpu.name", "NVIDIA L4", conditions.Declared)
	var b bytes.Buffer
	if err := Conditions(&b, conditions.Complete(s)); err != nil {
		t.Fatal(err)
	}
	golden(t, "env.golden", b.Bytes())
}

// TestGoBenchReadByBenchfmt checks that benchstat's own parser reads our lines: one result per
// run, with our units.
func TestGoBenchReadByBenchfmt(t *testing.T) {
	s := fakeSide(3, 20, 20, 0.01)
	var b bytes.Buffer
	if err := GoBench(&b, s.Header, s.Runs()); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(strings.NewReader(b.String()), "base.txt")
	n := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			n++
			if rec.Iters != 16 {
				t.Errorf("iterations %d, want 16 completed requests", rec.Iters)
			}
			if v, ok := rec.Value("itl-p50-ms"); !ok || v < 19 || v > 21 {
				t.Errorf("itl-p50-ms = %v, %v", v, ok)
			}
			if _, ok := rec.Value("out-tok/s"); !ok {
				t.Errorf("no out-tok/s in %s", b.String())
			}
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	if n != 3 {
		t.Errorf("%d results, want 3:\n%s", n, b.String())
	}
}

// The line compare ends with when a side measured nothing reads as English whatever measured
// nothing: never "the both measured nothing".
func TestNothingLine(t *testing.T) {
	for empty, want := range map[string]string{
		"base":                            "the base measured nothing: no completed measured request",
		"candidate":                       "the candidate measured nothing: no completed measured request",
		"both":                            "neither side measured anything: no completed measured request on either",
		"no key metric could be compared": "nothing to compare: no key metric could be compared",
	} {
		if got := NothingLine(&compare.Result{Verdict: compare.MeasuredNothing, Empty: empty}); got != want {
			t.Errorf("Empty %q: %q, want %q", empty, got, want)
		}
	}
}

// The same file's interval differs between report (its runs alone) and compare (both sides'
// spread pooled): each says which it is, so that a reader who sees both knows why.
func TestIntervalsSayWhatTheyAre(t *testing.T) {
	res := compare.Compare(fakeSide(3, 20, 20, 0.01), fakeSide(3, 20, 21, 0.01), compare.Options{})
	var b bytes.Buffer
	if err := RenderCompare(&b, "text", res, "base.jsonl", "cand.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[95% CI, run-to-run spread pooled over both sides]", "delta [95% CI of the difference]",
		"`servebench report` of one file takes it from that file's runs alone, so the two differ"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
	rep, err := os.ReadFile("testdata/golden/repeat.text.golden")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), "geometric mean of the runs [95% interval from this file's runs alone]") {
		t.Error("report of a --repeat file does not say its interval is from the file's runs alone")
	}
}

// The power column stands beside inconclusive rows only, where it says how many runs would
// decide them; beside rows already decided it added nothing, and with no inconclusive row the
// column is gone.
func TestPowerOnlyWhereItInforms(t *testing.T) {
	for _, c := range []struct {
		name       string
		base, cand *compare.Side
		column     bool
	}{
		{"decided", fakeSide(6, 20, 20, 0.01), fakeSide(6, 20, 60, 0.01), false},
		{"one run", fakeSide(1, 20, 20, 0), fakeSide(1, 20, 20.6, 0), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := compare.Compare(c.base, c.cand, compare.Options{Rounds: 300})
			var b bytes.Buffer
			if err := RenderCompare(&b, "text", res, "base.jsonl", "cand.jsonl"); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if has := strings.Contains(out, " power\n"); has != c.column {
				t.Fatalf("power column shown %v, want %v:\n%s", has, c.column, out)
			}
			for _, row := range res.Rows {
				var line string
				for l := range strings.Lines(out) {
					if strings.HasPrefix(l, "  "+row.Metric.Name+" ") {
						line = l
					}
				}
				if got := strings.Contains(line, "for 80%)"); got != (row.Change == compare.Inconclusive) {
					t.Errorf("%s (%s): power shown %v:\n%s", row.Metric.Name, row.Change, got, line)
				}
			}
		})
	}
}

// A warning that every run gives with its own figures and level is one note: the worst run's
// level and words, the runs named, and where it was milder — never one line per run.
func TestSideWarningsFoldAcrossRuns(t *testing.T) {
	delay := func(p99 float64, l metrics.Level) metrics.Warning {
		return metrics.Warning{Level: l, Action: "give servebench more CPU",
			Text: fmt.Sprintf("servebench's own delay between dispatch and sent is %.2f ms at p99", p99)}
	}
	sim := metrics.Warning{Level: metrics.Info, Text: "the target is servebench's built-in simulator"}
	runs := []metrics.RunSummary{
		{Run: 0, Summary: &metrics.Summary{Warnings: []metrics.Warning{sim, delay(3.9, metrics.Info)}}},
		{Run: 1, Summary: &metrics.Summary{Warnings: []metrics.Warning{sim, delay(11.74, metrics.Distorts)}}},
		{Run: 2, Summary: &metrics.Summary{Warnings: []metrics.Warning{sim, delay(4.2, metrics.Info)}}},
	}
	got := sideWarnings(runs)
	want := []string{
		"may distort: servebench's own delay between dispatch and sent is 11.74 ms at p99 (every run; the figures are run 2's, the worst; info in runs 1, 3). Next: give servebench more CPU",
		"info: the target is servebench's built-in simulator (every run)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
