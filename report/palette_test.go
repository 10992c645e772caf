package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The runs of a compare page are told apart by hue: each side's family of runTones colours
// (cool for the base, warm for the candidate) has hues at least 20° apart from every other
// colour of both families, in the light theme and the dark one; and the page draws run k of
// a side in its tone k, never as a lighter shade of one hue (three runs of a side in shades
// of blue read as one).
func TestRunPalette(t *testing.T) {
	roots := regexp.MustCompile(`(?s):root \{(.*?)\}`).FindAllStringSubmatch(htmlTemplate, -1)
	if len(roots) < 2 {
		t.Fatalf("want a light and a dark :root block in html.tmpl, got %d", len(roots))
	}
	for i, root := range roots[:2] {
		hues := map[string]float64{}
		for side := range 2 {
			for tone := range runTones {
				name := fmt.Sprintf("--c%d", side)
				if tone > 0 {
					name += fmt.Sprintf("-%d", tone)
				}
				m := regexp.MustCompile(regexp.QuoteMeta(name) + `:#([0-9a-f]{6});`).FindStringSubmatch(root[1])
				if m == nil {
					t.Fatalf("theme %d: no %s", i, name)
				}
				hues[name] = hue(m[1])
			}
		}
		for a, ha := range hues {
			for b, hb := range hues {
				if d := math.Abs(ha - hb); a < b && math.Min(d, 360-d) < 20 {
					t.Errorf("theme %d: %s (hue %.0f°) and %s (%.0f°) are alike", i, a, ha, b, hb)
				}
			}
		}
	}
	base := synthSide(1, 3, 120, 100, 20, "base", nil)
	cand := synthSide(2, 3, 120, 130, 26, "cand", nil)
	var page bytes.Buffer
	if err := Render(&page, "html", base, cand); err != nil {
		t.Fatal(err)
	}
	svg := page.String()[strings.Index(page.String(), `id="ttft-cdf"`):]
	svg = svg[:strings.Index(svg, "</svg>")]
	for _, want := range []string{`class="line s0" data-n`, `stroke:var(--c0-1)`, `stroke:var(--c0-2)`, `stroke:var(--c1-1)`, `stroke:var(--c1-2)`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the TTFT chart of 3 + 3 runs lacks %s", want)
		}
	}
	if strings.Contains(svg, "color-mix") {
		t.Error("runs drawn as shades of one hue")
	}
}

// hue is the HSL hue in degrees of a colour written rrggbb.
func hue(hex string) float64 {
	v, _ := strconv.ParseUint(hex, 16, 32)
	r, g, b := float64(v>>16)/255, float64(v>>8&0xff)/255, float64(v&0xff)/255
	mx, mn := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	if mx == mn {
		return 0
	}
	var h float64
	switch mx {
	case r:
		h = math.Mod((g-b)/(mx-mn), 6)
	case g:
		h = (b-r)/(mx-mn) + 2
	default:
		h = (r-g)/(mx-mn) + 4
	}
	return math.Mod(h*60+360, 360)
}
