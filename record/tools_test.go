package record

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestToolFieldsRoundTrip: the agent and tool-call fields encode byte for byte as
// encoding/json does, and read back (fast path) to the same record.
func TestToolFieldsRoundTrip(t *testing.T) {
	r := &Record{ID: 4, Phase: PhaseMeasure, Sent: 10, Done: 90, Task: 3, Step: 2, ToolTime: 250000000, FirstToolCall: 40,
		Error: "x", Server: map[string]float64{"a": 1},
		ToolCalls: []ToolCall{{Name: "get_weather", ID: "call_1", ArgTokens: 5, ArgBytes: 17},
			{Name: "f \"q\" é", ArgTokens: 1, ArgBytes: 2, Invalid: "at /: missing property 'city'"}}}
	got, want := encodeFast(t, r), viaJSON(t, r)
	if !bytes.Equal(got, want) {
		t.Fatalf("encode differs:\n got %s\nwant %s", got, want)
	}
	var back Record
	if !decodeFast(bytes.TrimSpace(got), &back) {
		t.Fatalf("fast decode gave up on %s", got)
	}
	if !reflect.DeepEqual(&back, r) {
		t.Errorf("read back %+v, want %+v", back, *r)
	}
	if !strings.Contains(string(got), `"task":3,"step":2,"tool_time":250000000,"first_tool_call":40,"tool_calls":[`) {
		t.Errorf("line %s", got)
	}
}
