package record

import (
	"bytes"
	"strings"
	"testing"
)

// Telemetry lines are handed to Header.Telemetry, never returned by Read, and a line of a
// newer version is skipped: Read means what it always meant.
func TestTelemetryLinesGoToTheHeader(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	v := 3.0
	_ = w.WriteHeader(&Header{Version: "test"})
	_ = w.Write(&Record{ID: 1, Phase: PhaseMeasure})
	_ = w.WriteTelemetry(&Telemetry{T: -5, Source: "http://h/metrics", OK: true,
		Series: []Series{{Name: "vllm:num_requests_waiting", Type: TypeGauge, Value: &v}}})
	_ = w.WriteTelemetry(&Telemetry{T: 9, Source: "http://h/metrics", Error: "timeout"})
	_ = w.WriteRunEnd(&RunEnd{Run: 0, Stop: "requests"})
	_ = w.Flush()
	// a future version of the line: skipped, not an error
	buf.WriteString(`{"servebench_telemetry":{"v":99,"t":1,"source":"x","ok":true,"new":[1]}}` + "\n")
	if !strings.Contains(buf.String(), `{"servebench_telemetry":{"v":1,"t":-5,"source":"http://h/metrics","ok":true,"series":[{"name":"vllm:num_requests_waiting","type":"gauge","value":3}]}}`) {
		t.Fatalf("line format:\n%s", buf.String())
	}
	h, recs, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || len(h.Ends) != 1 || len(h.Telemetry) != 2 {
		t.Fatalf("%d records, %d ends, %d telemetry lines; want 1, 1, 2", len(recs), len(h.Ends), len(h.Telemetry))
	}
	if tm := h.Telemetry[0]; tm.T != -5 || *tm.Series[0].Value != 3 || h.Telemetry[1].OK || h.Telemetry[1].Error != "timeout" {
		t.Errorf("telemetry %+v", h.Telemetry)
	}
}
