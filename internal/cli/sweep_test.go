package cli

import (
	"html"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/sim"
)

// TestSweepRepeatAndReport: sweep --repeat 2 over three points writes six runs, two per
// point, and a sweep-end line; report of the file prints the sweep's conclusions, as sweep
// printed them, in text, JSON, Markdown and HTML. Before, --repeat was accepted and ignored
// (three runs), and report printed no knee, goodput or SLO load.
func TestSweepRepeatAndReport(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil) // fixed 20 ms TTFT
	p := filepath.Join(t.TempDir(), "s.jsonl")
	code, out, errs := runMain(t, "sweep", "-q", "--url", url, "--concurrency", "1,2,4", "--repeat", "2",
		"--requests", "6", "--input-tokens", "16", "--output-tokens", "4", "--slo", "ttft=10s", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, recs := readRecords(t, p)
	runs := map[int]int{}
	for _, r := range recs {
		if r.Measured() {
			runs[r.Run]++
		}
	}
	if len(runs) != 6 || len(h.Ends) != 6 || h.Ends[3].Label != "concurrency 2, repeat 2/2" || h.Ends[3].Concurrency != 2 {
		t.Fatalf("measured records per run %v; ends %+v", runs, h.Ends)
	}
	e := h.SweepEnd
	if e == nil || e.Repeat != 2 || len(e.Points) != 3 || len(e.Points[2].Runs) != 2 || e.Points[2].Runs[1] != 5 || e.Knee == nil || e.SLOLoad == nil {
		t.Fatalf("sweep end %+v", e)
	}
	findings := []string{"saturation knee: runs ", "max goodput: runs ", "highest load meeting the SLOs (attainment ≥ 99%): runs 5–6, concurrency 4"}
	for _, f := range findings {
		if !strings.Contains(out, f) {
			t.Errorf("sweep printed no %q:\n%s", f, out)
		}
	}
	// the answer in one sentence opens the report, its figures the table's (answer.go)
	first, _, _ := strings.Cut(out, "\n")
	answer := strings.TrimSpace(strings.TrimPrefix(first, "answer"))
	if !strings.HasPrefix(first, "answer ") || !strings.Contains(answer, "this server serves 4 users at once (") {
		t.Errorf("first line is not the answer: %q", first)
	}
	if m := regexp.MustCompile(`\(([0-9.]+) req/s, ([0-9]+) output tok/s\)`).FindStringSubmatch(answer); m == nil ||
		!regexp.MustCompile(`(?m)^  5–6 +concurrency 4 +`+regexp.QuoteMeta(m[1])+` +`+m[2]+` `).MatchString(out) {
		t.Errorf("the answer's figures %q are not the table's row of concurrency 4:\n%s", m, out)
	}
	for _, format := range []string{"text", "json", "md", "html"} {
		code, rep, errs := runMain(t, "report", p, "--format", format)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d %s", format, code, errs)
		}
		if format == "html" && !strings.Contains(rep, `<p class="answer" id="answer"><b>Answer:</b> `+html.EscapeString(answer)+`</p>`) {
			t.Errorf("the HTML page does not open with the answer %q", answer)
		}
		for _, f := range findings {
			if !strings.Contains(rep, f) {
				t.Errorf("report --format %s lacks %q", format, f)
			}
		}
		if format == "text" && !strings.HasPrefix(rep, out) {
			t.Errorf("report's sweep table is not what sweep printed:\n%s\n---\n%s", out, rep)
		}
	}
}

// TestSweepAutoUnorderedIsInvalid: an --auto sweep against a simulator of 2 slots that
// throttles every step 5× from 1.3 s after its first on: the synchronous point (16 requests
// of 8 tokens, about 0.9 s) runs before it, the maximum-throughput point's measured requests
// after it, as on a machine that turned busy between them. Its maximum throughput is below
// the synchronous one, so the sweep is INVALID with the reason, its knee withheld, and exits
// 7; before, it printed the knee at the synchronous point and exited 0.
func TestSweepAutoUnorderedIsInvalid(t *testing.T) {
	url := startSimURL(t, func(c *sim.Config) {
		c.MaxNumSeqs, c.ThrottleAfter, c.ThrottleFactor = 2, 1300*time.Millisecond, 5
	})
	p := filepath.Join(t.TempDir(), "s.jsonl")
	code, out, errs := runMain(t, "sweep", "-q", "--url", url, "--auto", "--points", "0",
		"--requests", "16", "--input-tokens", "16", "--output-tokens", "8", "-o", p)
	h, _ := readRecords(t, p)
	logQuality(t, h)
	if code != exitcode.Invalid {
		t.Fatalf("exit %d, want %d (INVALID):\n%s\n%s", code, exitcode.Invalid, out, errs)
	}
	e := h.SweepEnd
	if e == nil || e.Unordered == "" || e.Knee != nil {
		t.Fatalf("sweep end %+v: want unordered, no knee", e)
	}
	for _, want := range []string{"INVALID sweep: the points cannot be ordered by load", "saturation knee and peak throughput: withheld"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep printed no %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "INVALID sweep") {
		t.Errorf("stderr lacks the INVALID line: %s", errs)
	}
}

// startSimURL starts a simulator in model mode (the engine model, where throttling acts)
// configured by mod, and returns its URL.
func startSimURL(t *testing.T, mod func(*sim.Config)) string {
	t.Helper()
	_, url := startSimServer(t, mod)
	return url
}

// TestSweepMaxPointBesideServerRate: the maximum-throughput point of an --auto sweep against
// a simulator of 4 slots, its /metrics scraped every 50 ms, states the server's own
// completion rate (its generation counter between its scrapes inside the window) beside
// servebench's, and the two agree within 15%.
func TestSweepMaxPointBesideServerRate(t *testing.T) {
	url := startSimURL(t, func(c *sim.Config) { c.MaxNumSeqs = 4 })
	p := filepath.Join(t.TempDir(), "s.jsonl")
	code, out, errs := runMain(t, "sweep", "-q", "--url", url, "--auto", "--points", "0", "--scrape-interval", "50ms",
		"--requests", "24", "--input-tokens", "64", "--output-tokens", "16", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, _ := readRecords(t, p)
	logQuality(t, h)
	pt := h.SweepEnd.Points[len(h.SweepEnd.Points)-1]
	if !strings.HasPrefix(pt.Label, "throughput (") || pt.ServerThroughput == nil || pt.RequestThroughput == nil {
		t.Fatalf("throughput point %+v: want the server's rate beside its own", pt)
	}
	tool, server := *pt.RequestThroughput, *pt.ServerThroughput
	t.Logf("throughput point %.2f req/s, the server's counter %.2f req/s", tool, server)
	if tool < 0.85*server || tool > 1.15*server {
		t.Errorf("throughput point %.2f req/s, the server's own %.2f: more than 15%% apart", tool, server)
	}
	if !strings.Contains(out, "maximum throughput: run 2, throughput (concurrency 24), ") || !strings.Contains(out, "the server's own counter, ") {
		t.Errorf("sweep does not state both rates:\n%s", out)
	}
}
