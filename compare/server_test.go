package compare

import (
	"testing"

	"servebench/metrics"
)

// Rows come from the runs' server sections, as the median over runs; ours only beside the
// server's; nothing without telemetry; and the verdict never reads them.
func TestServerRows(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	run := func(preempt, jpt float64) metrics.RunSummary {
		return metrics.RunSummary{Summary: &metrics.Summary{Server: &metrics.Server{
			Preemptions: f(preempt), TTFT: &metrics.HistQuantiles{P50: 0.25},
			GPU: &metrics.GPU{JoulesPerToken: f(jpt)}}}}
	}
	rows := serverRows([]metrics.RunSummary{run(1, 0.5), run(3, 0.7), run(100, 0.6)}, []metrics.RunSummary{run(0, 0.4)})
	got := map[string][2]float64{}
	for _, r := range rows {
		got[r.Name] = [2]float64{*r.Base, *r.Cand}
	}
	if got["preemptions"] != [2]float64{3, 0} || got["GPU energy per output token"] != [2]float64{0.6, 0.4} || got["server TTFT p50"] != [2]float64{250, 250} {
		t.Errorf("rows %v", got)
	}
	plain := []metrics.RunSummary{{Summary: &metrics.Summary{}}}
	if rows := serverRows(plain, plain); rows != nil {
		t.Errorf("rows without telemetry: %+v", rows)
	}
}
