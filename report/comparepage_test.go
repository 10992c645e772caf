package report

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"servebench/compare"
	"servebench/metrics"
	"servebench/record"
)

// synthSide is an input of runs repeats of n requests each: TTFT around ttftMS, 30 events
// about itlMS apart, each run a few percent off the others as real repeats are. mod, when
// not nil, changes the header.
func synthSide(seed uint64, runs, n int, ttftMS, itlMS float64, label string, mod func(*record.Header)) Input {
	rng := rand.New(rand.NewPCG(seed, 11))
	h := header(true)
	h.Conditions = []record.Condition{{Key: "gpu.name", Value: "H100", Source: "declared"}}
	if mod != nil {
		mod(h)
	}
	var recs []*record.Record
	for run := range runs {
		scale := 1 + 0.03*rng.NormFloat64()
		for i := range n {
			sent := int64(run)*30e9 + 1e9 + int64(i)*6e9/int64(n)
			r := &record.Record{ID: i, Run: run, Phase: record.PhaseMeasure, Scheduled: sent - 2e6, Dispatched: sent - 1e6, Sent: sent,
				Headers: sent + 1e6, PromptTokens: 128, PromptTokensSource: record.SourceServer, InputTokens: 128, MaxTokens: 30, Status: 200}
			t := sent + int64(ttftMS*scale*(1+0.1*rng.NormFloat64())*1e6)
			for range 30 {
				r.Events = append(r.Events, record.Event{T: t, N: 1})
				t += int64(itlMS * scale * (0.8 + 0.4*rng.Float64()) * 1e6)
			}
			r.OutputTokens, r.OutputTokensSource = 30, record.SourceServer
			r.FirstEvent, r.Done = r.Events[0].T, r.Events[29].T+1e6
			recs = append(recs, r)
		}
	}
	return Input{Label: label, Header: h, Records: func(yield func(*record.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}}
}

// sideOf reads an input into a comparison side the way `servebench compare` does.
func sideOf(t *testing.T, in Input) *compare.Side {
	t.Helper()
	opt, err := metrics.HeaderOptions(in.Header)
	if err != nil {
		t.Fatal(err)
	}
	s := compare.NewSide(in.Header, opt)
	for r, err := range in.Records {
		if err != nil {
			t.Fatal(err)
		}
		s.Add(r)
	}
	return s
}

// TestComparePageFigures: the compare page (html and md) of 3 + 3 runs states compare's
// verdict and exit code, and every metric's figures exactly as CompareText prints them.
func TestComparePageFigures(t *testing.T) {
	for _, c := range []struct {
		name    string
		candTTF float64
		candITL float64
		verdict string
		exit    int
	}{
		{"regressed", 130, 26, compare.Regressed, 4},
		{"improved", 70, 14, compare.Improved, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := synthSide(1, 3, 120, 100, 20, "base", nil)
			cand := synthSide(2, 3, 120, c.candTTF, c.candITL, "cand", nil)
			res := compare.Compare(sideOf(t, base), sideOf(t, cand), compare.Options{})
			if res.Verdict != c.verdict {
				t.Fatalf("compare's verdict %q, want %q: the fixture does not do what it says", res.Verdict, c.verdict)
			}
			var page, md bytes.Buffer
			if err := Render(&page, "html", base, cand); err != nil {
				t.Fatal(err)
			}
			if err := Render(&md, "md", base, cand); err != nil {
				t.Fatal(err)
			}
			h := page.String()
			i := strings.Index(h, `id="metrics"`)
			if i < 0 {
				t.Fatalf("no metrics table on the page:\n%.300s", h)
			}
			first := h[:i]
			if !strings.Contains(first, `<div class="word">`+strings.ToUpper(c.verdict)+`</div>`) {
				t.Errorf("the verdict %s is not at the top of the page", c.verdict)
			}
			exit := fmt.Sprintf("servebench compare would exit %d", c.exit)
			if !strings.Contains(first, exit) || !strings.Contains(md.String(), exit) {
				t.Errorf("page or md lacks %q", exit)
			}
			if !strings.HasPrefix(md.String(), "### servebench compare: "+strings.ToUpper(c.verdict)) {
				t.Errorf("md does not start with the verdict:\n%.200s", md.String())
			}
			for _, row := range res.Rows {
				want := []string{row.Metric.Name, cmpEstimate(row.Base, row.Metric.Unit), cmpEstimate(row.Cand, row.Metric.Unit),
					cmpDelta(row), cmpPN(row)}
				if powerInforms(row) { // a decided row's power is left out
					want = append(want, cmpPower(row.Power, res.Threshold))
				}
				for _, want := range want {
					if !strings.Contains(html.UnescapeString(h), want) {
						t.Errorf("html lacks %s's %q", row.Metric.Name, want)
					}
					if !strings.Contains(md.String(), mdEsc(want)) {
						t.Errorf("md lacks %s's %q", row.Metric.Name, want)
					}
				}
			}
			checkRepeats(t, h, len(res.Rows), 3, 3)
			if strings.Contains(h, "(tables: run") || strings.Contains(h, "TTFT against") {
				t.Error("the page shows the last run's tables or a line through the repeats")
			}
		})
	}
}

var repeatRE = regexp.MustCompile(`<circle class="repeat f\d" data-side="(base|candidate|run)" data-run="(\d+)"`)

// checkRepeats checks that every metric's strip draws one dot per run of each side.
func checkRepeats(t *testing.T, page string, metrics, baseRuns, candRuns int) {
	t.Helper()
	count := map[string]int{}
	for _, m := range repeatRE.FindAllStringSubmatch(page, -1) {
		count[m[1]]++
	}
	if count["base"] != metrics*baseRuns || count["candidate"] != metrics*candRuns {
		t.Errorf("dots drawn: %v; want %d base and %d candidate (%d metrics × runs)", count, metrics*baseRuns, metrics*candRuns, metrics)
	}
	if n := strings.Count(page, `<td class="l c0">`); n != baseRuns {
		t.Errorf("%d base rows in the table of every run, want %d", n, baseRuns)
	}
	if n := strings.Count(page, `<td class="l c1">`); n != candRuns {
		t.Errorf("%d candidate rows in the table of every run, want %d", n, candRuns)
	}
}

// TestComparePageConditions: the page flags the conditions compare flags and no other, and
// says "unknown" where a side does not know a condition.
func TestComparePageConditions(t *testing.T) {
	base := synthSide(1, 2, 60, 100, 20, "base", func(h *record.Header) {
		h.Conditions = append(h.Conditions, record.Condition{Key: "gpu.driver", Value: "550.54", Source: "detected"},
			record.Condition{Key: "workload.tokenizer", Value: "server:/tokenize", Source: "detected"})
	})
	cand := synthSide(2, 2, 60, 100, 20, "cand", func(h *record.Header) {
		h.Conditions = []record.Condition{{Key: "gpu.name", Value: "A100", Source: "declared"},
			{Key: "workload.tokenizer", Value: "server:/tokenize", Source: "detected"}}
	})
	res := compare.Compare(sideOf(t, base), sideOf(t, cand), compare.Options{})
	var page, md bytes.Buffer
	if err := Render(&page, "html", base, cand); err != nil {
		t.Fatal(err)
	}
	if err := Render(&md, "md", base, cand); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	differ := between(h, `id="conditions-differ"`, "</table>")
	for _, d := range res.Differences {
		if !strings.Contains(differ, "<td>"+d.Key+"</td>") {
			t.Errorf("compare flags %s; the page does not", d.Key)
		}
	}
	if n := strings.Count(differ, `<tr class="differs">`); n != len(res.Differences) {
		t.Errorf("%d conditions flagged, compare flags %d", n, len(res.Differences))
	}
	if strings.Contains(differ, "workload.tokenizer") {
		t.Error("workload.tokenizer flagged though both sides have it alike")
	}
	if !strings.Contains(differ, "<td>gpu.driver</td><td>550.54</td><td>unknown</td>") {
		t.Errorf("a condition one side lacks is not shown as unknown:\n%s", differ)
	}
	if strings.Contains(between(h, `id="conditions"`, "</table>"), "<td></td>") {
		t.Error("a blank cell in the conditions table")
	}
	if res.Verdict != compare.NotComparable || !strings.Contains(h, `<div class="word">NOT COMPARABLE</div>`) ||
		!strings.Contains(h, "would exit 5") || !strings.Contains(md.String(), "| gpu.name | H100 | A100 |") {
		t.Errorf("verdict %s: the page or the md does not say not comparable, exit 5, gpu.name", res.Verdict)
	}
}

// TestComparePageInChromium opens the compare page of 3 + 3 runs in headless Chromium and
// checks, in the rendered DOM, the verdict at the top, the intervals of the deltas, one dot
// per run per metric, and the charts drawn; a screenshot of the first screen is kept for a
// person to look at.
func TestComparePageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the browser test in -short mode")
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("skipping the browser test: %s not found (apt-get install chromium)", chromium)
	}
	base := synthSide(1, 3, 120, 100, 20, "base", nil)
	cand := synthSide(2, 3, 120, 130, 26, "cand", nil)
	var page bytes.Buffer
	if err := Render(&page, "html", base, cand); err != nil {
		t.Fatal(err)
	}
	dom, shot := openInChromium(t, "compare-page", page.Bytes())
	checkShot(t, shot)
	top := dom[:max(strings.Index(dom, `id="metrics"`), 0)]
	if !strings.Contains(top, `<div class="word">REGRESSED</div>`) || !strings.Contains(top, "would exit 4") {
		t.Errorf("the rendered page does not state the verdict and exit code first")
	}
	if !regexp.MustCompile(`[+-]\d[\d.]*% \[[+-]\d[\d.]*%, [+-]\d[\d.]*%\]`).MatchString(between(dom, `id="metrics"`, "</table>")) {
		t.Error("no delta with its interval in the metrics table")
	}
	checkRepeats(t, dom, len(compare.KeyMetrics), 3, 3)
	charts := svgRE.FindAllStringSubmatch(dom, -1)
	if len(charts) != 4 {
		t.Fatalf("%d charts, want 4", len(charts))
	}
	checkRunCharts(t, dom, map[string]int{"base": 3, "candidate": 3})
}

// TestComparePageChartsPerRun: on the compare page of 3 + 3 runs (as written; the Chromium
// test checks the same as rendered) each run is its own line, colour and legend entry, and the
// latency distributions are drawn on a log axis.
func TestComparePageChartsPerRun(t *testing.T) {
	base := synthSide(1, 3, 120, 100, 20, "base", nil)
	cand := synthSide(2, 3, 120, 130, 26, "cand", nil)
	var page bytes.Buffer
	if err := Render(&page, "html", base, cand); err != nil {
		t.Fatal(err)
	}
	checkRunCharts(t, page.String(), map[string]int{"base": 3, "candidate": 3})
}

var (
	legendEntryRE = regexp.MustCompile(`<line class="line s(\d)"[^>]*?( style="[^"]*")?\s*(?:/>|></line>)<text class="legend"[^>]*>([^<]*)</text>`) // Chromium serialises <line/> as <line></line>
	drawnLineRE   = regexp.MustCompile(`<path class="line s(\d)" data-n="\d+"( style="[^"]*")?`)
)

// checkRunCharts checks the per-run charts of a page whose sides have the given runs: each
// chart draws one line per run, has one legend entry per run ("base run 2", or the side's name
// alone when it has one run) in that line's colour, no two runs of a side share a
// colour, and the latency CDFs have a log x axis.
func checkRunCharts(t *testing.T, page string, sides map[string]int) {
	t.Helper()
	total := 0
	for _, n := range sides {
		total += n
	}
	for _, id := range []string{"ttft-cdf", "itl-cdf", "e2e-cdf", "tokens-time"} {
		k := strings.Index(page, `id="`+id+`"`)
		if k < 0 {
			t.Errorf("no chart %s", id)
			continue
		}
		svg := page[k:]
		svg = svg[:strings.Index(svg, "</svg>")]
		lines := drawnLineRE.FindAllStringSubmatch(svg, -1)
		legend := legendEntryRE.FindAllStringSubmatch(svg, -1)
		if len(lines) != total || len(legend) != total {
			t.Errorf("chart %s: %d lines and %d legend entries, want one each per run (%d)", id, len(lines), len(legend), total)
			continue
		}
		tones := map[string]bool{}
		for i, l := range legend {
			if l[1] != lines[i][1] || l[2] != lines[i][2] {
				t.Errorf("chart %s: legend entry %q is not drawn as its line (colour %s%s, line %s%s)", id, l[3], l[1], l[2], lines[i][1], lines[i][2])
			}
			tones[l[1]+l[2]] = true
		}
		if len(tones) != total {
			t.Errorf("chart %s: %d distinct tones for %d runs", id, len(tones), total)
		}
		for side, n := range sides {
			for r := 1; r <= n; r++ {
				want := fmt.Sprintf(">%s run %d</text>", side, r)
				if n == 1 {
					want = ">" + side + "</text>"
				}
				if !strings.Contains(svg, want) {
					t.Errorf("chart %s: no legend entry %q", id, want)
				}
			}
		}
		if id != "tokens-time" && !strings.Contains(svg, ", log scale</text>") {
			t.Errorf("chart %s: the latency axis is not log-scaled", id)
		}
	}
}

// TestRepeatPage: the single-file page of a --repeat file shows its runs as repeats: the
// repeats section (each key metric over the runs with its interval, exactly compare.Describe's
// figures, and one dot per run), a row per run, and its distribution charts one line per run;
// nothing pooled across runs (no single TTFT histogram of every run's requests).
func TestRepeatPage(t *testing.T) {
	const runs = 4
	in := synthSide(5, runs, 80, 100, 20, "rep.jsonl", nil)
	var page bytes.Buffer
	if err := Render(&page, "html", in); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	i, j := strings.Index(h, `id="repeats"`), strings.Index(h, `id="summary"`)
	if i < 0 || j < 0 || i > j {
		t.Fatalf("the repeats section is missing or below the last run's tables (at %d, summary at %d)", i, j)
	}
	ds := compare.Describe(sideOf(t, in), compare.Options{})
	if len(ds) == 0 {
		t.Fatal("Describe found no metric")
	}
	for _, d := range ds {
		if want := cmpEstimate(d.Estimate, d.Metric.Unit); !strings.Contains(html.UnescapeString(h), want) {
			t.Errorf("the page lacks %s over the runs, %q", d.Metric.Name, want)
		}
	}
	if n := len(repeatRE.FindAllString(h, -1)); n != len(ds)*runs {
		t.Errorf("%d dots drawn, want %d (%d metrics × %d runs)", n, len(ds)*runs, len(ds), runs)
	}
	if n := strings.Count(h, `<tr class="repeat-run">`); n != runs {
		t.Errorf("%d rows in the table of runs, want %d", n, runs)
	}
	checkRunCharts(t, h, map[string]int{"rep.jsonl": runs})
	if strings.Contains(h, `id="ttft-hist"`) {
		t.Error("the page pools every run's TTFTs into one histogram")
	}
	if !strings.Contains(h, fmt.Sprintf("the tables further down are run %d", runs)) {
		t.Error("the page does not say whose tables follow")
	}
	// text and md of the file (from its records) set the same figures under the run table;
	// the fixture's header names --repeat, as run writes it
	rep := synthSide(5, runs, 80, 100, 20, "rep.jsonl", func(h *record.Header) { h.Command = []string{"servebench", "run", "--repeat", "4"} })
	for _, format := range []string{"text", "md"} {
		var b bytes.Buffer
		if err := Render(&b, format, rep); err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if want := cmpEstimate(d.Estimate, d.Metric.Unit); !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %s over the runs, %q", format, d.Metric.Name, want)
			}
		}
	}
}

// TestComparePageThreshold: the page judges with the threshold and expected changes given
// (report --threshold, --expect-change) and says so: a +30% change is REGRESSED at compare's
// default 5% and not at 50%.
func TestComparePageThreshold(t *testing.T) {
	base := synthSide(1, 3, 120, 100, 20, "base", nil)
	cand := synthSide(2, 3, 120, 130, 26, "cand", nil)
	for _, c := range []struct {
		opt       compare.Options
		verdict   string
		flagsWord string
	}{
		{compare.Options{}, compare.Regressed, "at --threshold 5% (the default)"},
		{compare.Options{Threshold: 0.5, Expect: []string{"gpu.name"}}, compare.NoChange, "at --threshold 50%, --expect-change gpu.name"},
	} {
		b := base
		b.Compare = c.opt
		for _, format := range []string{"html", "md"} {
			var page bytes.Buffer
			if err := Render(&page, format, b, cand); err != nil {
				t.Fatal(err)
			}
			p := html.UnescapeString(page.String())
			if !strings.Contains(p, strings.ToUpper(c.verdict)) || !strings.Contains(p, c.flagsWord) {
				t.Errorf("%s at %+v: want verdict %s and %q:\n%.600s", format, c.opt, c.verdict, c.flagsWord, p)
			}
		}
	}
}
