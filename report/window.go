package report

import (
	"fmt"
	"strings"

	"servebench/record"
)

// Figures over time cover the whole run, warmup and cooldown included, and mark the
// measurement window on them: the warmup before it and the drain after it are shaded, so
// that the tokens and requests of the warmup are seen as load on the server, not read as a
// ramp of the measured load.

// windowSpan is what a Series knows of a run's extent: its first send (any phase), the
// latest end of any request, and the measurement window's end (the last done of a measured
// request); the window's start is Series.firstSent.
type windowSpan struct {
	seen             bool
	first, end, wEnd int64
}

// noteSpan notes one request's span [sent, end).
func (s *Series) noteSpan(sent, end int64, measured bool) {
	if !s.win.seen || sent < s.win.first {
		s.win.first = sent
	}
	s.win.seen = true
	s.win.end = max(s.win.end, end)
	if measured {
		if s.firstSent == 0 || sent < s.firstSent {
			s.firstSent = sent
		}
		s.win.wEnd = max(s.win.wEnd, end)
	}
}

// addTokens adds an unmeasured request's output tokens to their buckets (an unknown count is
// one token, as in addEvents).
func (s *Series) addTokens(ev []record.Event) {
	for _, e := range ev {
		if b := e.T / tick; e.T >= 0 && b < maxTicks {
			s.tokens = grow(s.tokens, int(b))
			s.tokens[b] += float64(max(e.N, 1))
		}
	}
}

// shade is a span of a chart's x axis drawn behind its marks, with a label at its top.
type shade struct {
	x0, x1 float64
	label  string
}

// windowShades are the warmup before the window and the drain after it, in seconds since
// the first measured send; nil when the run had neither.
func (s *Series) windowShades() []shade {
	if !s.win.seen || s.firstSent == 0 {
		return nil
	}
	var out []shade
	if s.win.first < s.firstSent {
		out = append(out, shade{float64(s.win.first-s.firstSent) / 1e9, 0, "warmup"})
	}
	if s.win.end > s.win.wEnd && s.win.wEnd > 0 {
		out = append(out, shade{float64(s.win.wEnd-s.firstSent) / 1e9, float64(s.win.end-s.firstSent) / 1e9, "after the window"})
	}
	return out
}

// windowEnd is the measurement window's end in seconds since its start.
func (s *Series) windowEnd() float64 { return float64(s.win.wEnd-s.firstSent) / 1e9 }

// drawShades draws the plot's shaded spans and, when it has any, the measurement window's
// edges as dashed lines.
func (p *plot) drawShades(b *strings.Builder) {
	for _, sh := range p.shades {
		x0, x1 := max(p.sx(sh.x0), padL), min(p.sx(sh.x1), padL+p.plotW())
		if x1 <= x0 {
			continue
		}
		fmt.Fprintf(b, `<rect class="shade" data-shade="%s" x="%.1f" y="%g" width="%.1f" height="%.1f"/>`, sh.label, x0, p.top(), x1-x0, p.plotH())
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">%s</text>`, (x0+x1)/2, p.top()+12, sh.label)
	}
	for _, x := range p.edges {
		fmt.Fprintf(b, `<line class="edge" x1="%.1f" y1="%g" x2="%.1f" y2="%.1f"/>`, p.sx(x), p.top(), p.sx(x), p.top()+p.plotH())
	}
}

// markWindow shades a one-run time chart outside the measurement window and marks its edges.
func markWindow(p *plot, s *Series) {
	p.shades = s.windowShades()
	if len(p.shades) == 0 {
		return
	}
	p.edges = []float64{0, s.windowEnd()}
	for _, sh := range p.shades {
		p.x0, p.x1 = min(p.x0, sh.x0), max(p.x1, sh.x1)
	}
	p.note += "; shaded: outside the measurement window (dashed lines: its edges)"
}
