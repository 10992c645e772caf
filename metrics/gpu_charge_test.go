package metrics

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"servebench/record"
)

// dcgmSamples are dcgm-exporter scrapes of two GPUs every 500 ms over [-0.5 s, 10.5 s], with
// NVIDIA's family names and units: GPU 0 busy at 400 W, its energy counter (mJ) rising by a
// slightly different 401 W so that the counter and the integral can be told apart; GPU 1 idle
// at 70 W; clock throttle reasons as given for GPU 0 (a bitmask), 0 for GPU 1.
func dcgmSamples(reasons func(t float64) float64) []record.Telemetry {
	var out []record.Telemetry
	for k := -1; k <= 21; k++ {
		t := float64(k) / 2
		smp := record.Telemetry{T: int64(math.Round(t * 1e9)), Source: "http://10.0.0.5:9400/metrics", OK: true}
		for g, w := range []float64{400, 70} {
			labels := map[string]string{"gpu": fmt.Sprint(g), "UUID": fmt.Sprintf("GPU-%d", g), "modelName": "NVIDIA H100 80GB HBM3"}
			util, rs := 95.0, reasons(t)
			if g == 1 {
				util, rs = 0, 0
			}
			for _, s := range []struct {
				name, typ string
				v         float64
			}{
				{"DCGM_FI_DEV_POWER_USAGE", "gauge", w},
				{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", 5e9 + (w+1)*(t+1)*1e3},
				{"DCGM_FI_DEV_GPU_UTIL", "gauge", util},
				{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", util / 2},
				{"DCGM_FI_DEV_SM_CLOCK", "gauge", 1980},
				{"DCGM_FI_DEV_FB_USED", "gauge", 40213},
				{"DCGM_FI_DEV_GPU_TEMP", "gauge", 61},
				{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", rs},
				{"DCGM_FI_DEV_XID_ERRORS", "gauge", 0},
			} {
				smp.Series = append(smp.Series, record.Series{Name: s.name, Labels: labels, Type: s.typ, Value: ptr(s.v)})
			}
		}
		out = append(out, smp)
	}
	return out
}

// A remote server's GPUs from dcgm-exporter: energy from the counter difference over the
// window (exactly, to the joule: 401 W × 10 s on the busy GPU), the idle GPU left out by its
// utilisation, and J/token the counter difference over the tokens.
func TestGPUFromDCGMCounter(t *testing.T) {
	sv := ServerDuring(dcgmSamples(func(float64) float64 { return 0 }), 0, 10e9, nil)
	g := sv.GPU
	if g == nil || g.Source != "http://10.0.0.5:9400/metrics" {
		t.Fatalf("GPU %+v", g)
	}
	g.Charge("", "", 2000)
	if len(g.Charged) != 1 || g.Charged[0] != "0" || g.ChargedBy != "utilisation" || g.EnergyMethod != "counter" ||
		g.EnergyField != "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" || g.PowerField != "DCGM_FI_DEV_POWER_USAGE" {
		t.Fatalf("charged %v by %q, method %q (%s, %s)", g.Charged, g.ChargedBy, g.EnergyMethod, g.EnergyField, g.PowerField)
	}
	if math.Abs(*g.EnergyJ-4010) > 1e-6 || math.Abs(*g.JoulesPerToken-4010.0/2000) > 1e-9 {
		t.Errorf("energy %v J, J/token %v; want the counter's 4010 J, 2.005", *g.EnergyJ, *g.JoulesPerToken)
	}
	if *g.SMClockMax != 1980 || *g.MemMaxB != 40213<<20 || *g.TempMaxC != 61 || math.Abs(*g.MemCopyUtilMean-0.2375) > 1e-9 {
		t.Errorf("clock %v, memory %v, temperature %v, copy util %v", *g.SMClockMax, *g.MemMaxB, *g.TempMaxC, *g.MemCopyUtilMean)
	}
	if g.UUIDs["1"] != "GPU-1" {
		t.Errorf("uuids %v", g.UUIDs)
	}
	// a counter that ran backwards (driver reload) is not read: the power is integrated
	smp := dcgmSamples(func(float64) float64 { return 0 })
	for i := range smp[10].Series {
		if smp[10].Series[i].Name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" {
			smp[10].Series[i].Value = ptr(0.0)
		}
	}
	g = ServerDuring(smp, 0, 10e9, nil).GPU
	g.Charge("", "", 2000)
	if g.EnergyMethod != "integrated" || math.Abs(*g.EnergyJ-4000) > 1e-6 {
		t.Errorf("reset counter: %q %v J, want integrated 4000", g.EnergyMethod, *g.EnergyJ)
	}
}

// The server's placement decides which GPUs are charged: its GPU by UUID; none for a CPU
// server (with a note naming its process); none when no GPU worked and it is unknown.
func TestGPUCharge(t *testing.T) {
	for _, tc := range []struct {
		placement string
		charged   int
		energy    float64
		note      string
	}{
		{"GPU-1", 1, 710, ""},
		{"GPU-0,GPU-1", 2, 4010 + 710, ""},
		{record.PlacementCPU, 0, 0, "the server's process (pid 4242 llama-server) holds memory on no GPU"},
		{"GPU-9", 0, 0, "holds memory on GPU-9, none of the GPUs sampled"},
	} {
		g := ServerDuring(dcgmSamples(func(float64) float64 { return 0 }), 0, 10e9, nil).GPU
		g.Charge(tc.placement, "4242 llama-server", 1000)
		if len(g.Charged) != tc.charged || !strings.Contains(g.NotCharged, tc.note) || (tc.note == "") != (g.NotCharged == "") {
			t.Errorf("%s: charged %v, note %q", tc.placement, g.Charged, g.NotCharged)
			continue
		}
		if tc.charged == 0 {
			if g.JoulesPerToken != nil || g.EnergyJ != nil {
				t.Errorf("%s: energy %v, J/token %v for a server that used no GPU", tc.placement, fmtPtr(g.EnergyJ), fmtPtr(g.JoulesPerToken))
			}
			continue
		}
		per := 0.0
		for _, e := range g.EnergyByGPU() {
			per += e
		}
		if math.Abs(*g.EnergyJ-tc.energy) > 1e-6 || math.Abs(*g.JoulesPerToken-tc.energy/1000) > 1e-9 || math.Abs(per-tc.energy) > 1e-6 {
			t.Errorf("%s: energy %v, want %v", tc.placement, *g.EnergyJ, tc.energy)
		}
	}
	// an idle machine and an unknown placement: nothing charged, and the summary says why
	idle := gpuSamples(1, func(int, float64) float64 { return 78 }, func(float64) float64 { return 345 })
	for i := range idle {
		for j := range idle[i].Series {
			if idle[i].Series[j].Name == record.GPUUtilization {
				idle[i].Series[j].Value = ptr(0.0)
			}
		}
	}
	var acc Accumulator
	acc.SetHeader(&record.Header{Telemetry: idle})
	for i := range 10 {
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Sent: int64(i)*1e9 + 1, FirstEvent: int64(i)*1e9 + 1e8, Done: int64(i)*1e9 + 1e9,
			OutputTokens: 100, OutputTokensSource: record.SourceServer, Events: []record.Event{{T: int64(i)*1e9 + 1e8, N: 100}}}
		acc.Add(&r)
	}
	s := acc.Summary()
	if g := s.Server.GPU; g.JoulesPerToken != nil || !strings.Contains(strings.Join(Texts(s.Warnings), "\n"), "no GPU energy per token: no GPU's utilisation reached 10%") {
		t.Errorf("idle GPU: J/token %v, warnings %q", fmtPtr(g.JoulesPerToken), Texts(s.Warnings))
	}
}

// The driver's reasons name the throttling: a power cap in half the busy readings is a
// warning that says so; an applications-clocks setting alone is no warning; with reasons
// read, a falling clock is not guessed at.
func TestGPUClockReasons(t *testing.T) {
	g := ServerDuring(dcgmSamples(func(t float64) float64 {
		if t >= 5 {
			return 0x4 | 0x2
		}
		return 0x2
	}), 0, 10e9, nil).GPU
	if len(g.Reasons) != 1 || len(g.Throttle) != 0 { // GPU 1 idled: no busy reading
		t.Fatalf("reasons %+v, throttle %+v", g.Reasons, g.Throttle)
	}
	r := g.Reasons[0]
	if r.GPU != "0" || r.Readings != 21 || len(r.Active) != 2 || r.Active[1].Name != "SW power cap" || r.Active[1].Readings != 11 {
		t.Errorf("GPU 0 reasons %+v", r)
	}
	s := &Summary{Server: &Server{GPU: g}}
	w := strings.Join(Texts(gpuWarnings(s)), "\n")
	if !strings.Contains(w, "GPU 0's clocks were held down by the driver: SW power cap in 11 of 21 busy readings") {
		t.Errorf("warnings %q", w)
	}
	g = ServerDuring(dcgmSamples(func(float64) float64 { return 0x2 }), 0, 10e9, nil).GPU
	if w := Texts(gpuWarnings(&Summary{Server: &Server{GPU: g}})); len(w) != 0 {
		t.Errorf("applications clocks setting warned: %q", w)
	}
}

// A dcgm-exporter with its energy counter, scraped beside nvidia-smi's readings (which have
// none), is the GPU source: the exact energy wins; without the exporter nvidia-smi's readings
// are used.
func TestGPUSourcePrefersTheCounter(t *testing.T) {
	local := gpuSamples(1, func(int, float64) float64 { return 300 }, func(float64) float64 { return 1980 })
	both := append(append([]record.Telemetry{}, local...), dcgmSamples(func(float64) float64 { return 0 })...)
	if g := ServerDuring(both, 0, 10e9, nil).GPU; g.Source != "http://10.0.0.5:9400/metrics" {
		t.Errorf("source %q, want the exporter with the counter", g.Source)
	}
	if g := ServerDuring(local, 0, 10e9, nil).GPU; g.Source != record.GPUSource {
		t.Errorf("source %q, want nvidia-smi", g.Source)
	}
}
