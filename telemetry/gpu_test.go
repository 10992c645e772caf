//go:build unix

package telemetry

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"servebench/record"
)

// fakeSMI is a stand-in for nvidia-smi, for tests: a shell script that honours -lms by
// printing one line per GPU every interval until killed. Its first clockAfter lines per GPU
// show an SM clock of 1980 MHz, the later ones 1500 (throttling); power is watts per GPU.
// Every start appends its process id and arguments to starts.
func fakeSMI(t testing.TB, dir string, gpus int, watts float64, clockAfter int, exitAfter int) (path, starts string) {
	t.Helper()
	starts = filepath.Join(dir, "starts")
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in --help-query-gpu|--query-compute-apps=*) exit 1;; esac
echo "$$ $@" >> %q
ms=1000
while [ $# -gt 0 ]; do
  if [ "$1" = "-lms" ]; then ms=$2; shift; fi
  shift
done
sec=$(printf '%%d.%%03d' $((ms/1000)) $((ms%%1000)))
i=0
while :; do
  clk=1980
  if [ $i -ge %d ]; then clk=1500; fi
  g=0
  while [ $g -lt %d ]; do
    echo "$g, %g, $clk, 87, 40213, 64"
    g=$((g+1))
  done
  i=$((i+1))
  echo $i >> %q
  if [ %d -gt 0 ] && [ $i -ge %d ]; then echo "NVML: driver gone" >&2; exit 9; fi
  sleep $sec
done
`, starts, clockAfter, gpus, watts, starts+".readings", exitAfter, exitAfter)
	path = filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, starts
}

// readings is how many readings the fake nvidia-smi has printed so far.
func readings(t *testing.T, starts string) int {
	b, err := os.ReadFile(starts + ".readings")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// One long-lived process per run, samples every interval on the run's clock, one sample per
// reading of both GPUs, and the process gone after Stop.
func TestGPUSamplerOneProcess(t *testing.T) {
	dir := t.TempDir()
	smi, starts := fakeSMI(t, dir, 2, 250, 5, 0)
	s := New(Config{GPU: smi, Interval: 50 * time.Millisecond})
	s.Prime(t.Context())
	t0 := time.Now()
	s.Start()
	// wait for the fake to have printed 8 readings (about 400 ms; far longer on a loaded
	// machine, where a fixed sleep saw too few), then take what the sampler read
	for deadline := time.Now().Add(30 * time.Second); readings(t, starts) < 8 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	samples := s.Stop(true)
	args, _ := os.ReadFile(starts)
	if n := strings.Count(string(args), "\n"); n != 1 {
		t.Fatalf("nvidia-smi started %d times, want once:\n%s", n, args)
	}
	pid, rest, _ := strings.Cut(strings.TrimSpace(string(args)), " ")
	want := "--query-gpu=index,power.draw,clocks.sm,utilization.gpu,memory.used,temperature.gpu --format=csv,noheader,nounits -lms 50"
	if rest != want {
		t.Errorf("args %q\nwant %q", rest, want)
	}
	if n, _ := strconv.Atoi(pid); n <= 0 || syscall.Kill(n, 0) == nil {
		t.Errorf("nvidia-smi (pid %s) still runs after Stop", pid)
	}
	// at least the 8 readings waited for, less the one Stop may cut; no more than the
	// interval allows (one every 50 ms, and the primed one)
	if most := int(elapsed/(50*time.Millisecond)) + 2; len(samples) < 7 || len(samples) > most {
		t.Fatalf("%d samples over %v at 50 ms (want 7 to %d)", len(samples), elapsed, most)
	}
	if samples[0].At.After(t0) {
		t.Errorf("first sample %v after t0: Prime must wait for the first reading", samples[0].At.Sub(t0))
	}
	var clocks []float64
	for i, smp := range samples {
		tl := smp.To(t0, 0)
		if !tl.OK || tl.Source != record.GPUSource || len(tl.Series) != 10 {
			t.Fatalf("sample %d: %+v", i, tl)
		}
		if i > 0 && !smp.At.After(samples[i-1].At) {
			t.Errorf("sample %d not after the previous", i)
		}
		for _, sr := range tl.Series {
			if sr.Name == record.GPUSMClock && sr.Labels["gpu"] == "1" {
				clocks = append(clocks, *sr.Value/1e6)
			}
			if sr.Name == record.GPUMemoryUsed && *sr.Value != 40213<<20 {
				t.Errorf("memory %v bytes", *sr.Value)
			}
		}
	}
	if clocks[0] != 1980 || clocks[len(clocks)-1] != 1500 {
		t.Errorf("SM clocks %v: want 1980 falling to 1500", clocks)
	}
	// a second run starts its own process, after the first was killed
	s.Prime(t.Context())
	if more := s.Stop(true); len(more) == 0 {
		t.Error("no sample in the second run")
	}
	args, _ = os.ReadFile(starts)
	if n := strings.Count(string(args), "\n"); n != 2 {
		t.Errorf("%d starts after two runs", n)
	}
}

// A process that dies is started again (at most gpuRestarts times), each death a failed
// sample with its stderr; one that cannot start is one failed sample. Neither blocks.
func TestGPUSamplerFailures(t *testing.T) {
	dir := t.TempDir()
	smi, starts := fakeSMI(t, dir, 1, 100, 100, 2)
	s := New(Config{GPU: smi, Interval: 20 * time.Millisecond})
	s.Prime(t.Context())
	s.Start()
	// the sampler gives up after the last restart's death: wait for that, not for a time a
	// busy machine may not fit the four processes' starts into
	select {
	case <-s.gpu.done:
	case <-time.After(time.Minute):
		t.Fatal("the sampler still runs a minute after its start, with every process dying after 2 readings")
	}
	samples := s.Stop(true)
	var ok, failed int
	for _, smp := range samples {
		if smp.OK {
			ok++
		} else {
			failed++
			if !strings.Contains(smp.Error, "exit status 9") || !strings.Contains(smp.Error, "NVML: driver gone") {
				t.Errorf("error %q", smp.Error)
			}
		}
	}
	args, _ := os.ReadFile(starts)
	if n := strings.Count(string(args), "\n"); n != 1+gpuRestarts || failed != 1+gpuRestarts || ok != 2*(1+gpuRestarts) {
		t.Errorf("%d starts, %d failed and %d ok samples; want %d, %d, %d", n, failed, ok, 1+gpuRestarts, 1+gpuRestarts, 2*(1+gpuRestarts))
	}

	s = New(Config{GPU: filepath.Join(dir, "absent"), Interval: 20 * time.Millisecond})
	start := time.Now()
	s.Prime(t.Context())
	s.Start()
	samples = s.Stop(true)
	// not blocked: a Prime that waited for a first reading would wait gpuStartWait
	if len(samples) != 1 || samples[0].OK || !strings.HasPrefix(samples[0].Error, "start: ") || time.Since(start) >= gpuStartWait {
		t.Errorf("absent nvidia-smi: %+v after %v", samples, time.Since(start))
	}
}

func TestParseGPULine(t *testing.T) {
	series, idx, err := parseGPULine(basicFields, " 3, [N/A], 1410, 100, 81000, 71\n")
	if err != nil || idx != "3" || len(series) != 4 {
		t.Fatalf("%v %q %d", err, idx, len(series))
	}
	if series[0].Name != record.GPUSMClock || *series[0].Value != 1410e6 || *series[1].Value != 1 {
		t.Errorf("%+v", series)
	}
	for _, bad := range []string{"", "0, 1, 2", "x, 1, 2, 3, 4, 5", "No devices were found"} {
		if _, _, err := parseGPULine(basicFields, bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := &lineWriter{line: func(b []byte, _ time.Time) { got = append(got, string(b)) }}
	for _, p := range []string{"0, 1", ", 2\n1, 3\n", "\n", strings.Repeat("x", maxGPULine+10), "y\n2\n"} {
		w.Write([]byte(p))
	}
	if strings.Join(got, "|") != "0, 1, 2|1, 3|2" {
		t.Errorf("lines %q", got)
	}
}

// The fields follow what --help-query-gpu lists: power.draw.average before power.draw, the
// UUID, the clock event reasons; values read with their units; power.draw where the average
// is [N/A] (a GPU older than Ampere); an energy counter only with its unit.
func TestChooseFieldsAndUnits(t *testing.T) {
	help := map[string]bool{"index": true, "uuid": true, "power.draw": true, "power.draw.average": true, "power.draw.instant": true,
		"clocks.sm": true, "utilization.gpu": true, "memory.used": true, "temperature.gpu": true, "clocks_event_reasons.active": true}
	fields := chooseFields(help)
	if q := queryOf(fields); q != "index,uuid,power.draw.average,power.draw,clocks.sm,utilization.gpu,memory.used,temperature.gpu,clocks_event_reasons.active" {
		t.Fatalf("query %s", q)
	}
	series, idx, err := parseGPULine(fields, "1, GPU-ab, 250.10 W, 262.00 W, 1980 MHz, 87 %, 40213 MiB, 64, 0x0000000000000004")
	if err != nil || idx != "1" {
		t.Fatal(err, idx)
	}
	got := map[string]float64{}
	for _, s := range series {
		got[s.Name] = *s.Value
		if s.Labels["uuid"] != "GPU-ab" {
			t.Errorf("%s labels %v", s.Name, s.Labels)
		}
		if s.Name == record.GPUPower && s.Labels["field"] != "power.draw.average" {
			t.Errorf("power field %q", s.Labels["field"])
		}
	}
	want := map[string]float64{record.GPUPower: 250.1, record.GPUSMClock: 1980e6, record.GPUUtilization: 0.87,
		record.GPUMemoryUsed: 40213 << 20, record.GPUTemperature: 64, record.GPUClockEventReasons: 4}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9*math.Abs(v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	series, _, _ = parseGPULine(fields, "0, GPU-cd, [N/A], 70.00 W, 1410 MHz, 0 %, 1 MiB, 30, 0x0000000000000001")
	if series[0].Name != record.GPUPower || *series[0].Value != 70 || series[0].Labels["field"] != "power.draw" {
		t.Errorf("power without an average: %+v", series[0])
	}
	e := smiField{"energy.x", record.GPUEnergy, 0}
	if v, ok := smiValue(e, "123456 mJ"); !ok || v != 123.456 {
		t.Errorf("energy in mJ: %v %v", v, ok)
	}
	if _, ok := smiValue(e, "123456"); ok {
		t.Error("an energy counter without its unit was read")
	}
	if f := chooseFields(nil); queryOf(f) != "index,power.draw,clocks.sm,utilization.gpu,memory.used,temperature.gpu" {
		t.Errorf("without help: %s", queryOf(f))
	}
}
