//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/conditions"
	"servebench/exitcode"
	"servebench/record"
)

// TestPowerLimitNotComparable: the llama.cpp peer measured twice on a (fake) H200 whose
// enforced power limit was lowered from 700 to 400 W between the runs: compare exits 5
// naming gpu.power_limit, and compares the pair when the change is expected.
func TestPowerLimitNotComparable(t *testing.T) {
	url := llamaTiny2(t)
	dir := t.TempDir()
	src, err := filepath.Abs("../../bench/testdata/nvidia-smi-h200")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, filepath.Join(dir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SMI_UTIL", "0")
	t.Setenv("FAKE_SMI_MEM", "0")
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, r := range []struct{ name, limit string }{{"base.jsonl", "700.00"}, {"low.jsonl", "400.00"}} {
		name, limit := r.name, r.limit
		t.Setenv("FAKE_SMI_LIMIT", limit)
		if code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "32", "--output-tokens", "8",
			"--requests", "8", "--concurrency", "2", "-o", p(name)); code != 0 {
			t.Fatalf("run: exit %d: %s", code, errs)
		}
	}
	hdr, _ := readRecords(t, p("low.jsonl"))
	cs := conditions.Set(hdr.Conditions)
	for k, v := range map[string]string{conditions.GPUPowerLimit: "400.00 W", conditions.GPUCUDA: "13.0", conditions.GPUPCIe: "gen5 x16",
		conditions.GPUUUID: "GPU-5d1c8a3e-7f2b-4c1d-9e0a-1b2c3d4e5f60", conditions.Placement: conditions.PlacementCPU} {
		if got := cs.Value(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// llama-server runs through the unpacked root's loader: the program is named, not the loader
	if proc := conditions.Set(hdr.Observed).Value(record.ObservedServerProcess); !strings.HasSuffix(proc, " llama-server") {
		t.Errorf("server process %q, want llama-server's pid and name", proc)
	}
	code, out, _ := runMain(t, "compare", p("base.jsonl"), p("low.jsonl"))
	if code != exitcode.NotComparable || !strings.Contains(out, "gpu.power_limit") || !strings.Contains(out, "700.00 W") {
		t.Errorf("compare: exit %d, want %d naming gpu.power_limit:\n%s", code, exitcode.NotComparable, out)
	}
	// the second run repeats the first's prompts, so llama.cpp may serve them from its cache:
	// that change is named too, to see the power limit's accepted
	if code, out, _ := runMain(t, "compare", p("base.jsonl"), p("low.jsonl"), "--expect-change", "gpu.power_limit",
		"--expect-change", "measurement.prefix_cache"); code == exitcode.NotComparable || code == exitcode.Usage {
		t.Errorf("compare --expect-change gpu.power_limit: exit %d:\n%s", code, out)
	}
}
