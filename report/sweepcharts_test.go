package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"servebench/record"
)

// sweepFile builds the records file of a three-point concurrency sweep (4, 8, 16 users), each
// point run repeats times with TTFT around 20, 40 and 80 ms (one run of the 16-user point has
// no SLO attainment above 0: its TTFT is far above the 60 ms of the fixture's SLO), and a
// sweep-end line, written by hand as a sweep would have recorded it (its figures are not the
// table's), with non-monotonic attainment: 8 users missed, 16 met.
func sweepFile(t *testing.T, repeats int) Input {
	t.Helper()
	users, ttft := []int{4, 8, 16}, []float64{20, 40, 80}
	sp := fixtureSpec{file: "sweep.jsonl", runs: len(users) * repeats, n: 12, itl: 12}
	h := fixtureHeader(sp)
	delete(h.Config, "concurrency")
	h.Label, h.Sweep = "sweep", "concurrency"
	var b bytes.Buffer
	w := record.NewWriter(&b)
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 11))
	end := &record.SweepEnd{Repeat: repeats, KneeShare: 0.9, SLO: "TTFT ≤ 60ms, TPOT ≤ 20ms", TargetAttainment: 0.99}
	attain := []float64{1, 0.2, 1}
	run := 0
	for i, u := range users {
		sp.ttft = ttft[i]
		pt := record.SweepPoint{Label: fmt.Sprintf("concurrency %d", u), Concurrency: u, Offered: float64(10 * u),
			RequestThroughput: ptr(float64(10 * u)), RequestGoodput: ptr(attain[i] * float64(10*u)), SLOAttainment: &attain[i]}
		for k := range repeats {
			for _, r := range fixtureRecords(sp, run, rng) {
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
			}
			label := pt.Label
			if repeats > 1 {
				label += fmt.Sprintf(", repeat %d/%d", k+1, repeats)
			}
			if err := w.WriteRunEnd(&record.RunEnd{Run: run, Concurrency: u, Stop: "requests", Label: label}); err != nil {
				t.Fatal(err)
			}
			pt.Runs = append(pt.Runs, run)
			run++
		}
		end.Points = append(end.Points, pt)
	}
	end.PeakThroughput, end.Knee, end.MaxGoodput = ptr(160.0), &end.Points[2], &end.Points[2]
	end.SLOLoad, end.FirstMiss, end.MetAbove = &end.Points[0], &end.Points[1], []record.SweepPoint{end.Points[2]}
	if err := w.WriteSweepEnd(end); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return readerInput(t, "sweep.jsonl", bytes.NewReader(b.Bytes()))
}

// TestSweepReportEveryFormat: report of a sweep's file prints the knee, the max-goodput point
// and the SLO load from its sweep-end line in text, JSON, Markdown and HTML, calls the
// non-monotonic attainment so, and marks each point's warnings in its table.
func TestSweepReportEveryFormat(t *testing.T) {
	want := []string{
		"saturation knee: runs 5–6, concurrency 16 (160.00 req/s, 100% of the peak 160.00 req/s)",
		"max goodput: runs 5–6, concurrency 16 (160.00 req/s meeting TTFT ≤ 60ms, TPOT ≤ 20ms)",
		"SLO attainment is not monotonic in load: runs 3–4, concurrency 8 (attainment 20.0%) missed, yet the heavier runs 5–6, concurrency 16 (attainment 100.0%) met them",
		"highest load whose every lighter tested point also met the SLOs (attainment ≥ 99%): runs 1–2, concurrency 4 (40.00 req/s)",
	}
	for _, format := range []string{"text", "json", "md", "html"} {
		var b bytes.Buffer
		if err := Render(&b, format, sweepFile(t, 2)); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q", format, w)
			}
		}
		if format == "text" && !regexp.MustCompile(`(?m)^ +3–4 +concurrency 8 .* [0-9,]+$`).MatchString(out) {
			t.Errorf("text: the 8-user point's row has no warning marks:\n%s", out)
		}
	}
}

// TestSweepRepeatGroupsRuns: six runs of three points are three rows of the table, each
// naming its two runs; without a sweep-end line the runs are grouped by their load.
func TestSweepRepeatGroupsRuns(t *testing.T) {
	in := sweepFile(t, 2)
	var b bytes.Buffer
	if err := Render(&b, "text", in); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{`1–2 +concurrency 4 `, `3–4 +concurrency 8 `, `5–6 +concurrency 16 `} {
		if !regexp.MustCompile(`(?m)^ *` + row).MatchString(b.String()) {
			t.Errorf("no row %q:\n%s", row, b.String())
		}
	}
	if !strings.Contains(b.String(), "sweep over concurrency (3 points × 2 runs)") {
		t.Errorf("load line:\n%s", b.String())
	}
}

var (
	sweepChartRE = regexp.MustCompile(`(?s)<svg class="chart" id="(sweep-[a-z]+)".*?</svg>`)
	dotsRE       = regexp.MustCompile(`(?s)<g class="dots f0" data-n="(\d+)">(.*?)</g>`)
	cxRE         = regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)"`)
	pointRowRE   = regexp.MustCompile(`(?s)<tr class="point">(.*?)</tr>`)
)

// checkSweepPage checks a sweep's page (as written, or as Chromium rendered it): the
// per-point table has one row per point, and the four curves (TTFT and TPOT against offered
// load, throughput against offered load, output tok/s per user against output tok/s) and the
// SLO ones each draw one dot per point, at increasing x, never one pooled distribution.
func checkSweepPage(t *testing.T, page string, points int) {
	t.Helper()
	rows := pointRowRE.FindAllStringSubmatch(page, -1)
	if len(rows) != points {
		t.Errorf("%d rows in the per-point table, want %d", len(rows), points)
	}
	for i, r := range rows {
		if !strings.Contains(r[1], fmt.Sprintf("concurrency %d", 4<<i)) {
			t.Errorf("row %d is not the %d-user point: %s", i, 4<<i, r[1])
		}
	}
	got := map[string]bool{}
	for _, c := range sweepChartRE.FindAllStringSubmatch(page, -1) {
		got[c[1]] = true
		if !strings.Contains(c[0], "offered load") && c[1] != "sweep-user" {
			t.Errorf("%s is not drawn against offered load", c[1])
		}
		for _, d := range dotsRE.FindAllStringSubmatch(c[0], -1) {
			if n, _ := strconv.Atoi(d[1]); n != points {
				t.Errorf("%s: a curve of %d dots, want one per point (%d)", c[1], n, points)
			}
			last := -1.0
			for _, cx := range cxRE.FindAllStringSubmatch(d[2], -1) {
				x, _ := strconv.ParseFloat(cx[1], 64)
				if x <= last && c[1] != "sweep-user" { // its x is output tok/s, which may fall past saturation
					t.Errorf("%s: dots not in increasing x (%v after %v)", c[1], x, last)
				}
				last = x
			}
		}
	}
	for _, id := range []string{"sweep-ttft", "sweep-tpot", "sweep-throughput", "sweep-user", "sweep-goodput", "sweep-attainment"} {
		if !got[id] {
			t.Errorf("no chart %s (have %v)", id, got)
		}
	}
	for _, pooled := range []string{`id="ttft-cdf"`, `id="ttft-hist"`, `id="itl-cdf"`, `id="summary"`, "tables: run"} {
		if strings.Contains(page, pooled) {
			t.Errorf("the sweep's page has %s, which pools its points or shows one run as the sweep", pooled)
		}
	}
}

// TestSweepHTMLPerPoint: the sweep's page has the per-point table and curves, not pooled.
func TestSweepHTMLPerPoint(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "html", sweepFile(t, 2)); err != nil {
		t.Fatal(err)
	}
	checkSweepPage(t, b.String(), 3)
	// TTFT p50 rises with the load in the fixture: the curve's dots climb (smaller y is higher)
	page := b.String()
	svg := page[strings.Index(page, `id="sweep-ttft"`):]
	d := dotsRE.FindStringSubmatch(svg)
	ys := cxRE.FindAllStringSubmatch(d[2], -1)
	y0, _ := strconv.ParseFloat(ys[0][2], 64)
	y2, _ := strconv.ParseFloat(ys[2][2], 64)
	if !(y2 < y0) {
		t.Errorf("TTFT p50 drawn at y %v for 4 users and %v for 16: it does not rise", y0, y2)
	}
}

// TestSweepHTMLInBrowser opens the sweep's page in headless Chromium: no request, no console
// message, and in the rendered DOM the per-point table and the curves per point.
func TestSweepHTMLInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("skipping the browser test: %s not found (apt-get install chromium)", chromium)
	}
	var b bytes.Buffer
	if err := Render(&b, "html", sweepFile(t, 2)); err != nil {
		t.Fatal(err)
	}
	dom, shot := openInChromium(t, "sweep", b.Bytes())
	checkSweepPage(t, dom, 3)
	if !strings.Contains(dom, "SLO attainment is not monotonic in load") {
		t.Error("the rendered page does not say attainment was not monotonic")
	}
	checkShot(t, shot)
}

// TestSweepGolden: a sweep's file in the formats a person or a script reads, against
// testdata/golden/sweep.FORMAT.golden (go test ./report -update rewrites them).
func TestSweepGolden(t *testing.T) {
	for _, format := range []string{"text", "md", "json"} {
		var b bytes.Buffer
		if err := Render(&b, format, sweepFile(t, 2)); err != nil {
			t.Fatal(err)
		}
		golden(t, "sweep."+format+".golden", b.Bytes())
	}
}
