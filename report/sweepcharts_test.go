package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
)

// TestPointCharts checks that a run with several points (a sweep) gets the latency and
// goodput curves, each drawn with one dot per point, in order of throughput.
func TestPointCharts(t *testing.T) {
	base := synthRun(1, 200, 80, "base")
	for i, ttft := range []float64{40, 80, 160} {
		p := synthRun(uint64(10+i), 100, ttft, "p")
		p.Summary.SLO = metrics.SLO{TTFT: 100 * time.Millisecond}
		g := 1.0
		p.Summary.RequestGoodput = &g
		base.Points = append(base.Points, Point{Label: "point", Summary: p.Summary})
	}
	var buf bytes.Buffer
	if err := HTMLRuns(&buf, []Run{base}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, id := range []string{"sweep-ttft", "sweep-e2e", "sweep-goodput"} {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Errorf("no chart %s", id)
			continue
		}
		svg := page[i:]
		svg = svg[:strings.Index(svg, "</svg>")]
		dots := regexp.MustCompile(`class="dots f0" data-n="(\d+)"`).FindStringSubmatch(svg)
		if dots == nil {
			t.Errorf("%s: no dots", id)
		} else if n, _ := strconv.Atoi(dots[1]); n != 3 {
			t.Errorf("%s: %d points drawn, want 3", id, n)
		}
	}
	// a single run has no per-point charts
	buf.Reset()
	one := synthRun(1, 50, 80, "one")
	if err := HTMLRuns(&buf, []Run{one}); err != nil || strings.Contains(buf.String(), "sweep-ttft") {
		t.Errorf("a one-run page drew per-point charts (%v)", err)
	}
}
