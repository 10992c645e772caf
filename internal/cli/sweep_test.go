package cli

import (
	"path/filepath"
	"strings"
	"testing"
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
	for _, format := range []string{"text", "json", "md", "html"} {
		code, rep, errs := runMain(t, "report", p, "--format", format)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d %s", format, code, errs)
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
