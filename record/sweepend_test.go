package record

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// A sweep-end line is handed to Header.SweepEnd, never returned by Read; a line of a newer
// version is skipped.
func TestSweepEndLineGoesToTheHeader(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	tp, g := 12.5, 11.0
	pt := SweepPoint{Label: "rate 12.5 req/s", Runs: []int{1, 2}, Rate: 12.5, Offered: 12.5, RequestThroughput: &tp, RequestGoodput: &g}
	_ = w.WriteHeader(&Header{Version: "test", Sweep: "rate"})
	_ = w.Write(&Record{ID: 1, Phase: PhaseMeasure})
	_ = w.WriteRunEnd(&RunEnd{Run: 0})
	_ = w.WriteSweepEnd(&SweepEnd{Repeat: 2, Points: []SweepPoint{pt}, KneeShare: 0.9, PeakThroughput: &tp, Knee: &pt, SLO: "TTFT ≤ 200ms", TargetAttainment: 0.99})
	_ = w.Flush()
	if !strings.Contains(buf.String(), `{"servebench_sweep_end":{"v":1,"repeat":2,"points":[{"label":"rate 12.5 req/s","runs":[1,2],"rate":12.5,`) {
		t.Fatalf("line format:\n%s", buf.String())
	}
	newer := `{"servebench_sweep_end":{"v":99,"repeat":3,"points":[],"future":true}}` + "\n"
	for _, extra := range []string{"", newer} {
		rd, err := NewReader(bytes.NewReader(append(buf.Bytes(), extra...)))
		if err != nil {
			t.Fatal(err)
		}
		recs := 0
		for {
			var r Record
			if err := rd.Read(&r); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			recs++
		}
		e := rd.Header().SweepEnd
		if recs != 1 || e == nil || e.Repeat != 2 || e.Knee == nil || e.Knee.Label != pt.Label || *e.PeakThroughput != 12.5 || len(e.Points[0].Runs) != 2 {
			t.Errorf("%d records, sweep end %+v", recs, e)
		}
	}
}
