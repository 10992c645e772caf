package report

import (
	"fmt"

	"servebench/metrics"
)

// timeline turns the E2E scatter into the top of a full-width figure when a run's records hold
// server telemetry: below it, on the same time axis (seconds since the run's first send), the
// server's queue (waiting solid, running dashed), its KV-cache usage and the GPUs' power, so
// that a slow stretch of requests can be read against what the server and the GPUs did then.
// Without telemetry the scatter is returned as it was: no empty panels.
func timeline(runs []Run, scatter *plot) *plot {
	tls := make([]metrics.Timeline, len(runs))
	for i, r := range runs {
		if r.Header != nil {
			tls[i] = metrics.ServerTimeline(r.Header.Telemetry)
		}
	}
	type curve struct {
		label  string
		dashed bool
		pick   func(metrics.Timeline) []metrics.TimePoint
	}
	specs := []struct {
		id, yLabel string
		scale      float64 // value → drawn unit
		fixedTop   float64 // the y axis's end when the unit has one (100%)
		curves     []curve
	}{
		{"server-queue", "requests (server)", 1, 0, []curve{
			{"waiting", false, func(t metrics.Timeline) []metrics.TimePoint { return t.Waiting }},
			{"running", true, func(t metrics.Timeline) []metrics.TimePoint { return t.Running }}}},
		{"server-kv", "KV cache usage (%)", 100, 100, []curve{
			{"KV usage", false, func(t metrics.Timeline) []metrics.TimePoint { return t.KVUsage }}}},
		{"gpu-power", "GPU power (W)", 1, 0, []curve{
			{"GPU power, all GPUs", false, func(t metrics.Timeline) []metrics.TimePoint { return t.GPUPower }}}},
	}
	var panels []*plot
	xMax := scatter.x1
	for _, sp := range specs {
		p := &plot{id: sp.id, yLabel: sp.yLabel, w: wideW, h: panelH, y1: sp.fixedTop}
		drawn := 0
		for i, r := range runs {
			for _, c := range sp.curves {
				var pts [][2]float64
				for _, tp := range c.pick(tls[i]) {
					// the run's first sample precedes its first send: the axis starts at the send
					if x := float64(tp.T-r.Series.firstSent) / 1e9; x >= 0 {
						pts = append(pts, [2]float64{x, tp.V * sp.scale})
						xMax = max(xMax, x)
						if sp.fixedTop == 0 {
							p.y1 = max(p.y1, tp.V*sp.scale*1.1)
						}
					}
				}
				if len(pts) == 0 {
					continue
				}
				label := c.label
				if len(runs) > 1 {
					label = r.Label + " " + c.label
				}
				drawn += len(pts)
				// a scraped gauge is known at its samples: each holds until the next
				p.marks = append(p.marks, mark{kind: markLine, run: i, dashed: c.dashed, step: true, label: label, pts: pts})
			}
		}
		if drawn > 0 {
			panels = append(panels, p)
		}
	}
	if len(panels) == 0 {
		return scatter
	}
	scatter.w, scatter.below = wideW, panels
	scatter.xLabel = ""
	scatter.title = "E2E latency per request against send time, and the server on the same time axis"
	scatter.note += fmt.Sprintf("; below, the server's own samples over the run (%d %s, each sample held until the next scrape; queue: waiting solid, running dashed)", len(panels), cmpPlural(len(panels), "panel", "panels"))
	scatter.x1 = xMax
	for _, p := range panels {
		p.x1 = xMax
	}
	panels[len(panels)-1].xLabel = "time (s since the first send)"
	return scatter
}
