package record

import (
	"bytes"
	"errors"
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
	for run := range 3 {
		_ = w.WriteRunEnd(&RunEnd{Run: run})
	}
	_ = w.WriteSweepEnd(&SweepEnd{Repeat: 2, Points: []SweepPoint{pt}, KneeShare: 0.9, PeakThroughput: &tp, Knee: &pt, SLO: "TTFT ≤ 200ms", TargetAttainment: 0.99})
	_ = w.Flush()
	if !strings.Contains(buf.String(), `{"servebench_sweep_end":{"v":1,"repeat":2,"points":[{"label":"rate 12.5 req/s","runs":[1,2],"rate":12.5,`) {
		t.Fatalf("line format:\n%s", buf.String())
	}
	newer := `{"servebench_sweep_end":{"v":99,"repeat":3,"points":[],"future":true}}` + "\n"
	for _, extra := range []string{"", newer} {
		h, recs, err := ReadAll(bytes.NewReader(append(buf.Bytes(), extra...)))
		if err != nil {
			t.Fatal(err)
		}
		e := h.SweepEnd
		if len(recs) != 1 || e == nil || e.Repeat != 2 || e.Knee == nil || e.Knee.Label != pt.Label || *e.PeakThroughput != 12.5 || len(e.Points[0].Runs) != 2 {
			t.Errorf("%d records, sweep end %+v", len(recs), e)
		}
	}
}

// sweepFile is a sweep's records file of runs 0, 1 and 2 (one record and a run-end line
// each), ended by the sweep-end line end.
func sweepFile(end string) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.WriteHeader(&Header{Version: "test", Sweep: "concurrency"})
	for run := range 3 {
		_ = w.Write(&Record{ID: 0, Run: run, Phase: PhaseMeasure})
		_ = w.WriteRunEnd(&RunEnd{Run: run, Concurrency: run + 1})
	}
	_ = w.Flush()
	return append(buf.Bytes(), end+"\n"...)
}

// readSweepFile reads b whole: the records read, the header, and the first error (nil at EOF).
func readSweepFile(b []byte) (int, *Header, error) {
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for range 1000 {
		var r Record
		switch err := rd.Read(&r); {
		case err == io.EOF:
			return n, rd.Header(), nil
		case err != nil:
			var le *LineError
			if errors.As(err, &le) {
				continue
			}
			return n, rd.Header(), err
		}
		n++
	}
	return n, rd.Header(), nil
}

// TestSweepEndChecked: a sweep-end line that names a run the file lacks, or puts a run in two
// points (or twice in one), is refused as not this file's, with a message naming the point
// and the run; a right one is taken.
func TestSweepEndChecked(t *testing.T) {
	for _, c := range []struct{ points, want string }{
		{`[{"label":"c1","runs":[0,1,2,99,-1]}]`, "names run 99"},
		{`[{"label":"c1","runs":[0,-1]}]`, "names run -1"},
		{`[{"label":"c1","runs":[0,1]},{"label":"c2","runs":[1,2]}]`, "run 1 is in point \"c1\" and in point \"c2\""},
		{`[{"label":"c1","runs":[0,0]}]`, "run 0 is in point"},
		{`[{"label":"c1","runs":[0]}],"knee":{"label":"k","runs":[2]}`, "conclusion \"k\" names run 2"},
		{`[{"label":"c1","runs":[0]},{"label":"c2","runs":[1]},{"label":"c3","runs":[2]}],"knee":{"label":"c2","runs":[1]}`, ""},
	} {
		_, h, err := readSweepFile(sweepFile(`{"servebench_sweep_end":{"v":1,"repeat":1,"points":` + c.points + `}}`))
		var re *RunError
		switch {
		case c.want == "" && (err != nil || h.SweepEnd == nil || len(h.SweepEnd.Points) != 3):
			t.Errorf("%s: %v, sweep end %+v; want it taken", c.points, err, h.SweepEnd)
		case c.want != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), c.want) || h.SweepEnd != nil):
			t.Errorf("%s: %v; want a run error with %q and no sweep end", c.points, err, c.want)
		}
	}
}

// FuzzSweepEnd: no sweep-end line panics the reader, and one it takes names only runs the
// file ended, each in one point.
func FuzzSweepEnd(f *testing.F) {
	f.Add(`{"servebench_sweep_end":{"v":1,"repeat":1,"points":[{"label":"c1","runs":[0,1,2,99,-1]}]}}`)
	f.Add(`{"servebench_sweep_end":{"v":1,"repeat":2,"points":[{"label":"c1","runs":[0,1]},{"label":"c3","runs":[2]}],"knee":{"label":"c3","runs":[2]},"peak_request_throughput":1e308}}`)
	f.Add(`{"servebench_sweep_end":{"v":1,"points":null,"knee":null}}`)
	f.Add(`{"servebench_sweep_end":{"v":-5,"points":[{"runs":[1e9]}]}}`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") {
			return
		}
		_, h, err := readSweepFile(sweepFile(line))
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("error is not one line: %q", err)
		}
		if h == nil || h.SweepEnd == nil {
			return
		}
		seen := map[int]bool{}
		for _, p := range h.SweepEnd.Points {
			for _, k := range p.Runs {
				if k < 0 || k > 2 || seen[k] {
					t.Fatalf("taken: run %d in %+v", k, h.SweepEnd.Points)
				}
				seen[k] = true
			}
		}
	})
}
