package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"servebench/compare"
)

// The servers' own figures follow the verdict as a block of their own, said to be outside it;
// a figure one side lacks is a dash, and so is the change.
func TestCompareTextServerBlock(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &compare.Result{BaseRuns: 1, CandRuns: 1, Method: compare.Method, Verdict: compare.NoChange, Threshold: 0.05,
		Server: []compare.ServerRow{
			{Name: "server TTFT p50", Unit: "ms", Base: f(355.06), Cand: f(236.8)},
			{Name: "preemptions", Base: f(0), Cand: f(41)},
			{Name: "KV usage max", Unit: "%", Base: f(6.7), Cand: f(100)},
			{Name: "GPU energy per output token", Unit: "J/token", Cand: f(0.088)},
		}}
	var b bytes.Buffer
	if err := CompareText(&b, r, "a.jsonl", "b.jsonl"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	verdict := strings.Index(out, "\nverdict ")
	block := strings.Index(out, "server side (its own telemetry, one run a side; informational, not part of the verdict):")
	if verdict < 0 || block < verdict {
		t.Fatalf("no server block after the verdict:\n%s", out)
	}
	for _, want := range []string{
		"server TTFT p50              355.1 ms  236.8 ms       -33.3%",
		"preemptions                  0         41             —",
		"KV usage max                 6.7%      100.0%         +1392.5%",
		"GPU energy per output token  —         0.088 J/token  —",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := CompareJSON(&b, r, "a", "b"); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Server []struct {
			Figure    string
			Candidate *float64
		}
	}
	if err := json.Unmarshal(b.Bytes(), &js); err != nil || len(js.Server) != 4 || *js.Server[1].Candidate != 41 {
		t.Errorf("json server %+v: %v", js.Server, err)
	}
	// without telemetry: no block
	r.Server = nil
	b.Reset()
	_ = CompareText(&b, r, "a", "b")
	if strings.Contains(b.String(), "server side") {
		t.Error("server block without telemetry")
	}
}

// Our own TTFT and ITL, which compare sets beside the server's, leave the server's table: a
// client figure there would read as the server's telemetry.
func TestCompareServerBlockHoldsNoClientFigure(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &compare.Result{BaseRuns: 1, CandRuns: 1, Method: compare.Method, Verdict: compare.NoChange, Threshold: 0.05,
		Server: []compare.ServerRow{
			{Name: "server TTFT p50", Unit: "ms", Base: f(355.06), Cand: f(236.8)},
			{Name: "servebench TTFT p50", Unit: "ms", Base: f(360), Cand: f(240)},
		}}
	var b bytes.Buffer
	if err := CompareText(&b, r, "a.jsonl", "b.jsonl"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "  servebench TTFT p50") || !strings.Contains(out, "servebench's own client-side figures, base → candidate: TTFT p50 360.0 ms → 240.0 ms (-33.3%)") {
		t.Errorf("our TTFT is in the server's table, or missing beside it:\n%s", out)
	}
	server, ours := splitServerRows(r.Server)
	if len(server) != 1 || server[0].Name != "server TTFT p50" || ours == "" {
		t.Errorf("split %+v, %q", server, ours)
	}
}
