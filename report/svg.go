package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The HTML report's charts are SVG written here in Go rather than drawn by a charting library
// from npm embedded with go:embed. We chose SVG from Go because the report must open with no
// network, and a library would be a vendored JavaScript dependency to keep up to date and
// audit, whose output a Go test cannot read; the SVG is plain markup in the file, readable by
// the test's DOM dump, printable, and styled by the page's CSS (light and dark colours).
// What we give up is interactivity (hover values, zoom): the tables carry the exact figures.

// Chart geometry in SVG user units; the SVG scales to its container's width.
const (
	chartW, chartH                 = 600.0, 300.0
	padL, padR, padT, padB         = 62.0, 18.0, 30.0, 44.0
	wideW, panelH                  = 1200.0, 170.0 // a full-width figure and its panels (timeline.go)
	legendY                        = 14.0
	markLine, markArea, markDots   = 0, 1, 2
	histBins                       = 40
	dotRadius, legendSwatch, ticks = 2.2, 18.0, 6
)

// mark is one data series of a chart: a line, a filled histogram outline or dots, coloured
// by its run (0 base, 1 candidate).
type mark struct {
	kind   int
	run    int
	tone   int // 0: the side's colour; 1 to runTones−1: another of its side's family (runStyle)
	dashed bool
	// step draws a line as steps: each value held until the next point. A gauge scraped
	// every few seconds is known at its samples only, and a ramp between two of them drew
	// a queue that grew smoothly where it jumped.
	step   bool
	label  string
	pts    [][2]float64
	radius float64 // dots: 0 is dotRadius (a sweep's curves draw each point larger)
}

// plot is one chart: axis ranges, labels and marks.
type plot struct {
	id, title, note, xLabel, yLabel string
	x0, x1, y0, y1                  float64
	marks                           []mark
	w, h                            float64 // size in user units; 0: chartW, chartH
	// below are panels drawn under the chart in the same SVG, on its x axis (timeline.go).
	below []*plot
	// logX: x values are log10 of the figure (loghist.go); ticks are labelled with the figure.
	logX bool
	// shades and edges mark the measurement window on a chart over time (window.go).
	shades []shade
	edges  []float64
	// topPad caches top() while body draws (0: not computed yet).
	topPad float64
}

func (p *plot) width() float64  { return cmp.Or(p.w, chartW) }
func (p *plot) height() float64 { return cmp.Or(p.h, chartH) }
func (p *plot) plotW() float64  { return p.width() - padL - padR }
func (p *plot) plotH() float64  { return p.height() - p.top() - padB }

func (p *plot) sx(x float64) float64 { return padL + (x-p.x0)/(p.x1-p.x0)*p.plotW() }
func (p *plot) sy(y float64) float64 {
	return p.top() + p.plotH() - (y-p.y0)/(p.y1-p.y0)*p.plotH()
}

// svg renders the chart. Every mark carries data-n, its number of drawn points, so that a test
// can check from the DOM that the chart is drawn.
func (p *plot) svg() string {
	total := p.height()
	for _, q := range p.below {
		total += q.height()
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" data-chart="%s" viewBox="0 0 %g %g" role="img" aria-label="%s">`,
		p.id, p.id, p.width(), total, html.EscapeString(p.title))
	p.body(&b)
	y := p.height()
	for _, q := range p.below {
		fmt.Fprintf(&b, `<g class="panel" data-panel="%s" transform="translate(0 %g)">`, q.id, y)
		q.body(&b)
		b.WriteString("</g>")
		y += q.height()
	}
	b.WriteString("</svg>")
	return b.String()
}

// body draws the chart's axes, marks and legend.
func (p *plot) body(b *strings.Builder) {
	p.topPad = 0 // the marks are final now: lay the legend out once
	p.topPad = p.top()
	if p.x1 <= p.x0 {
		p.x1 = p.x0 + 1
	}
	if p.y1 <= p.y0 {
		p.y1 = p.y0 + 1
	}
	p.axes(b)
	p.drawShades(b)
	for _, m := range p.marks {
		p.drawMark(b, m)
	}
	p.legend(b)
}

// axes draws the grid, tick labels and axis titles.
func (p *plot) axes(b *strings.Builder) {
	xt, xl := niceTicks(p.x0, p.x1, ticks), tickLabel
	if p.logX {
		xt, xl = logTicks(p.x0, p.x1), func(x float64) string { return tickLabel(math.Pow(10, x)) }
	}
	for _, x := range xt {
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, p.sx(x), p.top(), p.sx(x), p.top()+p.plotH())
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, p.sx(x), p.top()+p.plotH()+15, xl(x))
	}
	for _, y := range niceTicks(p.y0, p.y1, ticks-1) {
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, padL, p.sy(y), padL+p.plotW(), p.sy(y))
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-6, p.sy(y)+4, tickLabel(y))
	}
	fmt.Fprintf(b, `<rect class="frame" x="%g" y="%g" width="%g" height="%g"/>`, padL, p.top(), p.plotW(), p.plotH())
	fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, padL+p.plotW()/2, p.height()-6, html.EscapeString(p.xLabel))
	fmt.Fprintf(b, `<text class="axis" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, p.top()+p.plotH()/2, html.EscapeString(p.yLabel))
}

func (p *plot) drawMark(b *strings.Builder, m mark) {
	dash := m.style()
	if m.dashed {
		dash += ` stroke-dasharray="6 4"`
	}
	switch m.kind {
	case markDots:
		fmt.Fprintf(b, `<g class="dots f%d" data-n="%d">`, m.run, len(m.pts))
		for _, pt := range m.pts {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%g"/>`, p.sx(pt[0]), p.sy(min(pt[1], p.y1)), cmp.Or(m.radius, dotRadius))
		}
		b.WriteString("</g>")
	case markArea:
		fmt.Fprintf(b, `<path class="area s%d f%d" data-n="%d"%s d="%s"/>`, m.run, m.run, len(m.pts), dash, p.path(m.pts, true, false))
	default:
		fmt.Fprintf(b, `<path class="line s%d" data-n="%d"%s d="%s"/>`, m.run, len(m.pts), dash, p.path(m.pts, false, m.step))
	}
}

// style is the attribute that gives a mark of tone > 0 its colour: one of its side's family
// (--c0-1 …, cool hues for the base, warm ones for the candidate, in the page's light and dark
// themes), so that each run of a side has its own hue and legend entry and the sides stay
// apart.
func (m mark) style() string {
	if m.tone <= 0 || m.tone >= runTones {
		return ""
	}
	c := fmt.Sprintf("var(--c%d-%d)", m.run, m.tone)
	if m.kind == markLine {
		return fmt.Sprintf(` style="stroke:%s"`, c)
	}
	return fmt.Sprintf(` style="stroke:%s;fill:%s"`, c, c)
}

// runTones is how many colours each side's family has (html.tmpl: --cN and --cN-1 … -3).
const runTones = 4

// runStyle is the tone of run k of a side, and whether it is dashed: the side's colours in
// turn, dashed from the fifth run on. Shades of one hue (its colour mixed into the
// background) were tried first: three runs of a side read as one.
func runStyle(k int) (tone int, dashed bool) {
	return k % runTones, (k/runTones)%2 == 1
}

// path is the SVG path through pts; closed down to the x axis for an area; with step, each
// value held until the next point's x.
func (p *plot) path(pts [][2]float64, area, step bool) string {
	var b strings.Builder
	for i, pt := range pts {
		if step && i > 0 {
			fmt.Fprintf(&b, "H%.1f", p.sx(pt[0]))
		}
		cmd := "L"
		if i == 0 {
			cmd = "M"
			if area {
				fmt.Fprintf(&b, "M%.1f %.1f", p.sx(pt[0]), p.sy(p.y0))
				cmd = "L"
			}
		}
		fmt.Fprintf(&b, "%s%.1f %.1f", cmd, p.sx(pt[0]), p.sy(min(pt[1], p.y1)))
	}
	if area && len(pts) > 0 {
		fmt.Fprintf(&b, "L%.1f %.1fZ", p.sx(pts[len(pts)-1][0]), p.sy(p.y0))
	}
	return b.String()
}

// legend writes a swatch and label per labelled mark along the top, in rows that wrap at the
// chart's right edge (legendSlots); the plot starts below the last row (top).
func (p *plot) legend(b *strings.Builder) {
	for _, sl := range p.legendSlots() {
		m := sl.m
		swatch := m
		swatch.kind = markLine
		dash := swatch.style()
		if m.dashed {
			dash += ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<line class="line s%d" x1="%.1f" y1="%g" x2="%.1f" y2="%g"%s/>`, m.run, sl.x, sl.y, sl.x+legendSwatch, sl.y, dash)
		fmt.Fprintf(b, `<text class="legend" x="%.1f" y="%g">%s</text>`, sl.x+legendSwatch+5, sl.y+4, html.EscapeString(m.label))
	}
}

// legendSlot is where one labelled mark's legend entry goes.
type legendSlot struct {
	m    mark
	x, y float64
}

// legendRowH is the height of a legend row.
const legendRowH = 15.0

// legendSlots lays the legend out from the left, a label's width estimated from its runes
// (6.2 units each at the legend's font size), starting a new row when an entry would pass
// the chart's right edge: a long label (two file names) is never cut off.
func (p *plot) legendSlots() []legendSlot {
	var out []legendSlot
	x, y := padL, legendY
	for _, m := range p.marks {
		if m.label == "" {
			continue
		}
		w := legendSwatch + 16 + 6.2*float64(len([]rune(m.label)))
		if x > padL && x+w-16 > p.width()-padR {
			x, y = padL, y+legendRowH
		}
		out = append(out, legendSlot{m, x, y})
		x += w
	}
	return out
}

// top is where the plot area starts: below the title pad, and below every legend row past
// the first.
func (p *plot) top() float64 {
	if p.topPad > 0 {
		return p.topPad
	}
	rows := 1.0
	if sl := p.legendSlots(); len(sl) > 0 {
		rows = 1 + (sl[len(sl)-1].y-legendY)/legendRowH
	}
	return padT + legendRowH*(rows-1)
}

// niceTicks returns about n round values (1, 2 or 5 × 10^k apart) covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return []float64{lo}
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// tickLabel prints a tick value compactly: 0.25, 10, 1.5k.
func tickLabel(v float64) string {
	if v == 0 {
		v = 0 // -0 (a tick at the window's start, from a negative axis) prints as 0
	}
	if math.Abs(v) >= 10000 {
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}
