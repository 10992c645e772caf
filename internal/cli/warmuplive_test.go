package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"servebench/sim"
)

// TestWarmupAutoLive is a measuring harness, not a check: with SERVEBENCH_WARMUP_LIVE set to
// a folder it runs --warmup auto against the cold-start cases of
// TestWarmupAutoAgainstColdStart, the issue's --cold-start case at 8 users and 128/32, and a
// steady simulator, and keeps each run's records, summary and the simulator's cold end
// there, so that live runs beside busy loops can be compared (docs/metrics.md "Warmup").
func TestWarmupAutoLive(t *testing.T) {
	dir := os.Getenv("SERVEBENCH_WARMUP_LIVE")
	if dir == "" {
		t.Skip("SERVEBENCH_WARMUP_LIVE not set")
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	cases := []struct {
		name             string
		mod              func(*sim.Config)
		users, in, outTk string
	}{
		{"custom", func(c *sim.Config) { c.ColdSteps, c.ColdFactor, c.GraphCapture = 300, 4, 20*time.Millisecond }, "4", "64", "16"},
		{"preset", func(c *sim.Config) { c.ColdStart = true }, "4", "64", "16"},
		{"issue", func(c *sim.Config) { c.ColdStart = true }, "8", "128", "32"},
		{"steady", func(c *sim.Config) {}, "4", "64", "16"},
	}
	for _, k := range cases {
		srv, url := startSimServer(t, k.mod)
		out := filepath.Join(dir, run+"-"+k.name+".jsonl")
		code, stdout, errs := runMain(t, "run", "--url", url, "--warmup", "auto", "--requests", "60", "--concurrency", k.users,
			"--input-tokens", k.in, "--output-tokens", k.outTk, "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", k.name, code, errs)
		}
		h, _ := readRecords(t, out)
		ph := srv.Phases()
		var coldEnd int64
		if !ph.ColdEnd.IsZero() {
			coldEnd = int64(ph.ColdEnd.Sub(h.Start))
		}
		load, _ := os.ReadFile("/proc/loadavg")
		meta, _ := json.Marshal(map[string]any{"case": k.name, "cold_end_ns": coldEnd, "captures": ph.Captures,
			"stdout": stdout, "loadavg": string(load)})
		if err := os.WriteFile(out+".meta.json", meta, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
