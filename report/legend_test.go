package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var legendRE = regexp.MustCompile(`<text class="legend" x="([0-9.]+)" y="([0-9.]+)">([^<]*)</text>`)

// TestLegendWraps: legend entries that do not fit on one row (two long file names and their
// token lines) wrap into rows inside the chart's width, and the plot area starts below the
// last row; a short legend stays on one row at the usual top.
func TestLegendWraps(t *testing.T) {
	long := strings.Repeat("baseline-h100-vllm-0.11-", 2) + ".jsonl"
	mk := func(labels ...string) *plot {
		p := &plot{id: "t", title: "t", x1: 1, y1: 1}
		for i, l := range labels {
			p.marks = append(p.marks, mark{kind: markLine, run: i % 2, label: l, pts: [][2]float64{{0, 0}, {1, 1}}})
		}
		return p
	}
	p := mk(long+" chunk", long+" token", "cand "+long+" chunk", "cand "+long+" token")
	svg := p.svg()
	rows := map[string]bool{}
	for _, m := range legendRE.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		if end := x + 6.2*float64(len([]rune(m[3]))); end > chartW-padR+1 {
			t.Errorf("legend %q ends at %.0f, past the chart's edge %.0f", m[3], end, chartW-padR)
		}
		rows[m[2]] = true
	}
	if len(rows) < 2 {
		t.Fatalf("the long legend did not wrap: rows %v", rows)
	}
	if top := p.top(); top != padT+legendRowH*float64(len(rows)-1) {
		t.Errorf("plot top %.0f with %d legend rows", top, len(rows))
	}
	short := mk("base", "cand")
	short.svg()
	if short.top() != padT {
		t.Errorf("a short legend moved the plot to %.0f", short.top())
	}
}
