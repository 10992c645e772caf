//go:build unix

package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/conditions"
	"servebench/record"
	"servebench/runspec"
)

// fakeSMI puts a stand-in nvidia-smi first on PATH: a shell script that honours -lms with one
// line per interval until killed, 300 W, and an SM clock of 1980 MHz for its first 4 lines
// and 1500 after (throttling). Each start appends a line to the returned file.
func fakeSMI(t *testing.T) string {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	script := `#!/bin/sh
case "$1" in --help-query-gpu|--query-compute-apps=*) exit 1;; esac
echo "$@" >> ` + starts + `
ms=1000
while [ $# -gt 0 ]; do
  if [ "$1" = "-lms" ]; then ms=$2; shift; fi
  shift
done
sec=$(printf '%d.%03d' $((ms/1000)) $((ms%1000)))
i=0
while :; do
  clk=1980
  if [ $i -ge 4 ]; then clk=1500; fi
  echo "0, 300.00, $clk, 90, 20480, 70"
  i=$((i+1))
  sleep $sec
done
`
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return starts
}

// A server on 127.0.0.1 with nvidia-smi on PATH: one nvidia-smi for the run, its readings in
// the records' telemetry lines, the window's energy and J/token in the summary, and the clock
// drop as a warning.
func TestGPUSamplingFakeSMI(t *testing.T) {
	starts := fakeSMI(t)
	url := simURL(t, nil)
	s, hdr := runTo(t, url, func(s *runspec.Spec) { s.Concurrency, s.Requests = 4, 24 })
	args, _ := os.ReadFile(starts)
	if n := strings.Count(string(args), "\n"); n != 1 || !strings.Contains(string(args), "-lms 100") {
		t.Fatalf("nvidia-smi started %d times: %q", n, args)
	}
	n := 0
	for _, tl := range hdr.Telemetry {
		if tl.Source == record.GPUSource {
			n++
		}
	}
	g := s.Server.GPU
	if n < 5 || g == nil || g.JoulesPerToken == nil {
		t.Fatalf("%d GPU samples over %v; GPU %+v", n, s.Window, g)
	}
	// 300 W over the window, divided by its output tokens
	want := 300 * s.Window.Seconds() / float64(s.OutputTokens)
	if d := *g.JoulesPerToken/want - 1; d < -0.01 || d > 0.01 {
		t.Errorf("J/token %.4f, want %.4f (300 W × %v / %d tokens)", *g.JoulesPerToken, want, s.Window, s.OutputTokens)
	}
	if !strings.Contains(strings.Join(s.WarningTexts(), "\n"), "SM clock fell from 1980 to 1500 MHz") {
		t.Errorf("no throttling warning in %q", s.Warnings)
	}
	t.Logf("%d GPU samples over a %v window; %.4f J/token", n, s.Window, *g.JoulesPerToken)
}

// A server elsewhere: no GPU sampling, whatever nvidia-smi is on PATH.
func TestGPUSamplingOnlyLocal(t *testing.T) {
	fakeSMI(t)
	if p := localSMI("http://10.1.2.3:8000"); p != "" {
		t.Errorf("remote server sampled with %s", p)
	}
	if p := localSMI("http://127.0.0.1:8000"); p == "" {
		t.Error("local server not sampled")
	}
}

// h200SMI puts testdata/nvidia-smi-h200 first on PATH as nvidia-smi, answering
// --query-compute-apps with apps and reading utilisation util (%).
func h200SMI(t *testing.T, apps string, util int) {
	dir := t.TempDir()
	src, err := filepath.Abs("testdata/nvidia-smi-h200")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, filepath.Join(dir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SMI_APPS", apps)
	t.Setenv("FAKE_SMI_UTIL", strconv.Itoa(util))
}

// A server whose process holds memory on no GPU (nvidia-smi lists another process), on an
// idle GPU: no J/token, a note that says why, and placement cpu. The same server listed on
// the GPU: its energy and J/token, by the power field the driver has (power.draw.average),
// and placement the GPU's UUID, so the two runs' conditions differ; the driver's power-cap
// reason is a note that names it.
func TestGPUEnergyOnlyForTheServersGPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the server's process is found through /proc: Linux only")
	}
	url := simURL(t, nil)
	// two rounds of 4 requests a run: J/token is the window's energy over its tokens whatever
	// its length (24 requests took 3 s a run on the wall clock)
	spec := func(s *runspec.Spec) { s.Concurrency, s.Requests = 4, 8 }

	h200SMI(t, "1, GPU-5d1c8a3e-7f2b-4c1d-9e0a-1b2c3d4e5f60, 3972\n", 0)
	s, cpu := runTo(t, url, spec)
	g := s.Server.GPU
	if g == nil || g.JoulesPerToken != nil || g.EnergyJ != nil {
		t.Fatalf("CPU server charged GPU energy: %+v", g)
	}
	notes := strings.Join(s.WarningTexts(), "\n")
	if want := fmt.Sprintf("no GPU energy per token: the server's process (pid %d ", os.Getpid()); !strings.Contains(notes, want) ||
		!strings.Contains(notes, "holds memory on no GPU") {
		t.Errorf("notes %q, want %q… holds memory on no GPU", notes, want)
	}
	if v := conditions.Set(cpu.Conditions).Value(conditions.Placement); v != conditions.PlacementCPU {
		t.Errorf("placement %q, want cpu", v)
	}

	h200SMI(t, fmt.Sprintf("%d, GPU-5d1c8a3e-7f2b-4c1d-9e0a-1b2c3d4e5f60, 3972\n", os.Getpid()), 90)
	t.Setenv("FAKE_SMI_REASONS", "0x0000000000000004") // SW power cap in every reading
	s, gpu := runTo(t, url, spec)
	if notes := strings.Join(s.WarningTexts(), "\n"); !strings.Contains(notes, "GPU 0's clocks were held down by the driver: SW power cap in") {
		t.Errorf("no power-cap note from the driver's reasons in %q", notes)
	}
	g = s.Server.GPU
	if g == nil || g.JoulesPerToken == nil || g.ChargedBy != "placement" || g.PowerField != "power.draw.average" || g.EnergyMethod != "integrated" {
		t.Fatalf("GPU server: %+v", g)
	}
	want := 250 * s.Window.Seconds() / float64(s.OutputTokens)
	if d := *g.JoulesPerToken/want - 1; d < -0.01 || d > 0.01 {
		t.Errorf("J/token %.4f, want %.4f (250 W × %v / %d tokens)", *g.JoulesPerToken, want, s.Window, s.OutputTokens)
	}
	diffs := conditions.Diff(cpu.Conditions, gpu.Conditions, nil)
	found := false
	for _, d := range diffs {
		if d.Key == conditions.Placement {
			found = d.Kind == conditions.KindBlocking && d.Cand.Value == "GPU-5d1c8a3e-7f2b-4c1d-9e0a-1b2c3d4e5f60"
		}
	}
	if !found {
		t.Errorf("placement not a blocking difference: %+v", diffs)
	}
}

// The simulator's dcgm-exporter endpoint scraped as a remote server's would be: the GPU
// figures come from it, energy from its counter (the counter difference over the window,
// interpolated at the window's ends, to the joule), J/token that energy over the output
// tokens, and its labels among the conditions.
//
// The scrapes time out after their interval, and beside busy loops the simulator (in this
// process) answered 100 ms ones late: a failed first scrape (before t0) or last (at the stop)
// left a window end unsampled, where the energy is the counter's over the span its readings
// cover (Coverage, and no J/token below metrics' minimum), and the first scrape alone carries
// the labels into the header. So the scrapes get the default interval's second, and the
// expected energy is the counter's interpolated over the window clipped to its readings, as
// metrics documents; an end left unsampled is logged, not judged against a guess.
func TestGPUFromSimDCGM(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi: the GPU readings are the exporter's alone
	url := simURL(t, nil)
	dcgm := url + "/dcgm/metrics"
	s, hdr := runTo(t, url, func(s *runspec.Spec) {
		s.Concurrency, s.Requests, s.Scrape, s.ScrapeInterval = 4, 24, []string{dcgm}, time.Second
	})
	g := s.Server.GPU
	if g == nil || g.Source != dcgm || g.EnergyMethod != "counter" || g.EnergyJ == nil || g.ChargedBy != "utilisation" {
		t.Fatalf("GPU %+v", g)
	}
	var pts [][2]float64
	primed, seen := false, false // the exporter's first scrape, before t0, answered
	for _, tl := range hdr.Telemetry {
		if tl.Source == dcgm && !seen {
			primed, seen = tl.OK && tl.T <= 0, true
		}
		for _, sr := range tl.Series {
			if tl.Source == dcgm && sr.Name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" {
				pts = append(pts, [2]float64{float64(tl.T), *sr.Value / 1e3})
			}
		}
	}
	if len(pts) < 2 {
		t.Fatalf("%d counter readings: want 2 at least", len(pts))
	}
	interp := func(t float64) float64 {
		i := 1
		for i < len(pts)-1 && pts[i][0] < t {
			i++
		}
		a, b := pts[i-1], pts[i]
		return a[1] + (b[1]-a[1])*(t-a[0])/(b[0]-a[0])
	}
	// the window clipped to the readings: [start, end] itself when both ends were sampled
	lo, hi := max(float64(s.WindowStart), pts[0][0]), min(float64(s.WindowEnd), pts[len(pts)-1][0])
	want, cover := interp(hi)-interp(lo), (hi-lo)/float64(s.WindowEnd-s.WindowStart)
	if math.Abs(*g.EnergyJ-want) > 1 || math.Abs(g.Coverage-cover) > 1e-9 {
		t.Errorf("energy %.3f J over %.4f of the window; the counter says %.3f J over %.4f", *g.EnergyJ, g.Coverage, want, cover)
	}
	switch jpt := g.JoulesPerToken; {
	case jpt != nil && math.Abs(*jpt-want/float64(s.OutputTokens)) > 1/float64(s.OutputTokens):
		t.Errorf("J/token %.5f; the counter says %.5f J/token", *jpt, want/float64(s.OutputTokens))
	case jpt == nil && cover == 1:
		t.Errorf("no J/token for a window its counter readings cover whole")
	case cover < 1:
		t.Logf("a scrape at a window end failed: readings cover %.3f of it, J/token given %v", cover, jpt != nil)
	}
	if !primed {
		t.Logf("the first scrape failed: the exporter's labels never reached the header; not judged")
	} else if v := conditions.Set(hdr.Conditions).Value(conditions.GPUUUID); !strings.HasPrefix(v, "GPU-") {
		t.Errorf("gpu.uuid %q from the exporter's labels", v)
	}
	t.Logf("%d counter readings; %.1f J over %v, coverage %.3f", len(pts), *g.EnergyJ, s.Window, g.Coverage)
}
