package report

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLogHistSpreadsSkewedValues: 95% of ITLs near 10 ms and a tail to 2 s (the shape that put
// 95% of values in the first of 40 linear bins) spread over many log bins, and a 0 ms value is
// counted and named, not lost.
func TestLogHistSpreadsSkewedValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var vals []float64
	for i := range 4000 {
		v := 8 + 4*rng.Float64()
		if i%20 == 0 {
			v = 50 + 1950*rng.Float64()
		}
		vals = append(vals, v)
	}
	vals = append(vals, 0)
	slices.Sort(vals)
	p := logHistPlot("itl-hist", "ITL", "ITL (ms)", []dist{{label: "run", vals: vals}})
	most, filled := 0.0, 0
	for i := 1; i < len(p.marks[0].pts); i += 2 {
		f := p.marks[0].pts[i][1]
		most = max(most, f)
		if f > 0 {
			filled++
		}
	}
	if most > 0.5 || filled < 10 {
		t.Errorf("largest bin holds %.0f%% of values, %d bins filled: the body is not spread", 100*most, filled)
	}
	if !p.logX || !strings.Contains(p.note, "1 value of 0 ms counted in the first bin") {
		t.Errorf("note %q", p.note)
	}
	svg := p.svg()
	for _, tick := range []string{">10<", ">100<", ">1000<"} {
		if !strings.Contains(svg, tick) {
			t.Errorf("log axis lacks the tick %s", tick)
		}
	}
}
