package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/sim"
)

// TestLoRAMix: a 3-adapter weighted mix against the simulator serving those
// adapters sends each request to its adapter (the model field), records it, splits the
// traffic as weighted, reports per-adapter figures in text, JSON and HTML, records the mix
// as a condition, and hashes it with the workload.
func TestLoRAMix(t *testing.T) {
	t.Parallel()
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL = 5*time.Millisecond, time.Millisecond
		c.Adapters = sim.LoRAList{"a1", "a2", "a3"}
	})
	dir := t.TempDir()
	recs, js, page := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	mix := "a1:0.5,a2:0.3,a3:0.2"
	code, out, errs := runMain(t, "run", "--url", url, "--input-tokens", "16", "--output-tokens", "8",
		"--requests", "60", "--concurrency", "16", "--lora-modules", mix, "-o", recs, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"3 LoRA adapters", "adapter", "a1", "a2", "a3", "TTFT p50", "per LoRA adapter"} {
		if !strings.Contains(out, want) {
			t.Errorf("text summary lacks %q:\n%s", want, out)
		}
	}
	hdr, rs := readRecords(t, recs)
	count := map[string]int{}
	for _, r := range rs {
		if !r.OK() {
			t.Fatalf("request %d failed: %s", r.ID, r.Error)
		}
		if r.Measured() {
			count[r.Adapter]++
		}
	}
	// 60 draws, seeded (the same every run): each share within 4.5 standard deviations of
	// its weight; workload's TestAssignLoRA holds the draw to its weights over 10,000
	for name, w := range map[string]float64{"a1": 0.5, "a2": 0.3, "a3": 0.2} {
		if got, sd := float64(count[name])/60, math.Sqrt(w*(1-w)/60); math.Abs(got-w) > 4.5*sd {
			t.Errorf("adapter %s got %.3f of the requests, want %.1f", name, got, w)
		}
	}
	if len(count) != 3 {
		t.Errorf("adapters in the records: %v", count)
	}
	cond := map[string]string{}
	for _, c := range hdr.Conditions {
		cond[c.Key] = c.Value
	}
	if cond["workload.lora_modules"] != mix {
		t.Errorf("condition workload.lora_modules = %q, want %q", cond["workload.lora_modules"], mix)
	}
	var sum struct {
		Adapters []struct {
			Adapter   string   `json:"adapter"`
			Share     float64  `json:"share"`
			Completed int      `json:"completed"`
			TTFT      *float64 `json:"median_ttft_ms"`
			Out       *float64 `json:"output_throughput"`
		} `json:"adapters"`
		Completed int `json:"completed"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Adapters) != 3 {
		t.Fatalf("JSON adapters (%v): %s", err, b)
	}
	total := 0
	for _, a := range sum.Adapters {
		total += a.Completed
		if a.Completed != count[a.Adapter] || a.TTFT == nil || *a.TTFT < 4 || a.Out == nil {
			t.Errorf("JSON adapter %+v, records count %d", a, count[a.Adapter])
		}
	}
	if total != sum.Completed {
		t.Errorf("adapters completed %d, run %d", total, sum.Completed)
	}
	code, _, errs = runMain(t, "report", recs, "--format", "html", "-o", page)
	if code != 0 {
		t.Fatalf("report html: exit %d: %s", code, errs)
	}
	h, _ := os.ReadFile(page)
	for _, want := range []string{`<h2 id="adapters">LoRA adapters</h2>`, `<td class="l">a2</td>`, "TTFT p99"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// the mix is part of the workload's identity: another mix, another hash (round robin is
	// exact: 30 requests show it as 300 would)
	recs2 := filepath.Join(dir, "r2.jsonl")
	code, _, errs = runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "8",
		"--requests", "30", "--concurrency", "16", "--lora-modules", "a1,a2,a3", "--lora-selection", "round-robin", "-o", recs2)
	if code != 0 {
		t.Fatalf("round-robin: exit %d: %s", code, errs)
	}
	hdr2, rs2 := readRecords(t, recs2)
	if hdr2.Workload.Hash == hdr.Workload.Hash {
		t.Error("two mixes share a workload hash")
	}
	rr := map[string]int{}
	for _, r := range rs2 {
		if r.Measured() {
			rr[r.Adapter]++
		}
	}
	if rr["a1"] != 10 || rr["a2"] != 10 || rr["a3"] != 10 {
		t.Errorf("round robin over 30: %v", rr)
	}
}

// TestLoRABadInput: a bad mix is a usage error before any request; an adapter the server
// does not serve fails as vLLM's 404 does, as data.
func TestLoRABadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--lora-modules", "a1:0"}, {"--lora-modules", "a1,a1"}, {"--lora-modules", "a1:x"},
		{"--lora-selection", "round-robin"}, {"--lora-modules", "a1", "--lora-selection", "weighted"},
	} {
		code, _, errs := runMain(t, append([]string{"run", "--url", "http://127.0.0.1:1", "--requests", "1"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") > 2 || !strings.Contains(errs, "lora") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL = time.Millisecond, time.Millisecond
		c.Adapters = sim.LoRAList{"a1"}
	})
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "--url", url, "--requests", "4", "--warmup", "0", "--output-tokens", "4",
		"--lora-modules", "a1,nope", "--lora-selection", "round-robin", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, rs := readRecords(t, p)
	for _, r := range rs {
		if want := r.Adapter == "nope"; want != (r.Status == 404) {
			t.Errorf("adapter %s: status %d", r.Adapter, r.Status)
		}
	}
	if !strings.Contains(out, "nope") {
		t.Errorf("summary lacks the failing adapter:\n%s", out)
	}
}

// TestLoRALike: run --like replays a LoRA mix exactly: the same adapter for every request
// and the same workload hash.
func TestLoRALike(t *testing.T) {
	t.Parallel()
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL = time.Millisecond, time.Millisecond
		c.Adapters = sim.LoRAList{"a1", "a2"}
	})
	dir := t.TempDir()
	base, again := filepath.Join(dir, "base.jsonl"), filepath.Join(dir, "again.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--requests", "40", "--output-tokens", "4", "--lora-modules", "a1:3,a2", "-o", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs = runMain(t, "run", "-q", "--url", url, "--like", base, "-o", again)
	if code != 0 {
		t.Fatalf("--like: exit %d: %s", code, errs)
	}
	h1, r1 := readRecords(t, base)
	h2, r2 := readRecords(t, again)
	if h1.Workload.Hash != h2.Workload.Hash || len(r1) != len(r2) {
		t.Fatalf("hash %s vs %s, %d vs %d records", h1.Workload.Hash, h2.Workload.Hash, len(r1), len(r2))
	}
	by := map[int]string{}
	for _, r := range r1 {
		by[r.ID] = r.Adapter
	}
	for _, r := range r2 {
		if r.Adapter == "" || by[r.ID] != r.Adapter {
			t.Errorf("request %d: adapter %q, baseline %q", r.ID, r.Adapter, by[r.ID])
		}
	}
}
