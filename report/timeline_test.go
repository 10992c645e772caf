package report

import (
	"regexp"
	"strings"
	"testing"
)

// The server's gauges are drawn as steps: a scraped value holds until the next scrape, so
// between two samples the line is flat and then jumps (H then L in the path), never a ramp
// from one sample to the next.
func TestServerGaugesAreSteps(t *testing.T) {
	r := synthRunWith(3, 400, 80, "telemetry", synthTelemetry)
	p := timeline([]Run{r}, scatterPlot([]Run{r}))
	if len(p.below) == 0 {
		t.Fatal("no server panels")
	}
	for _, panel := range p.below {
		for _, m := range panel.marks {
			if !m.step {
				t.Errorf("panel %s, %s: drawn as a ramp between scrapes", panel.id, m.label)
			}
		}
	}
	svg := p.svg()
	queue := regexp.MustCompile(`<path class="line s0" data-n="(\d+)"[^>]* d="([^"]+)"`).FindAllStringSubmatch(svg[strings.Index(svg, `data-panel="server-queue"`):], -1)
	if len(queue) == 0 {
		t.Fatalf("no queue line in:\n%s", svg)
	}
	d := queue[0][2]
	if hs, ls := strings.Count(d, "H"), strings.Count(d, "L"); hs == 0 || hs != ls {
		t.Errorf("the waiting line's path has %d H and %d L: want one flat run and one jump per sample after the first: %s", hs, ls, d)
	}
}
