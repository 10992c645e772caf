package metrics

import (
	"math"
	"strings"
	"testing"

	"servebench/record"
)

// gpuSamples are readings of n GPUs every 100 ms from t=-0.1 s to 10.1 s: power(i, t) W and
// clock(t) MHz, utilisation 90%.
func gpuSamples(n int, power func(gpu int, t float64) float64, clock func(t float64) float64) []record.Telemetry {
	var out []record.Telemetry
	for k := -1; k <= 101; k++ {
		t := float64(k) / 10
		smp := record.Telemetry{T: int64(math.Round(t * 1e9)), Source: record.GPUSource, OK: true}
		for g := range n {
			labels := map[string]string{"gpu": string(rune('0' + g))}
			for _, s := range []struct {
				name string
				v    float64
			}{{record.GPUPower, power(g, t)}, {record.GPUSMClock, clock(t) * 1e6}, {record.GPUUtilization, 0.9}, {record.GPUTemperature, 60}} {
				smp.Series = append(smp.Series, record.Series{Name: s.name, Labels: labels, Type: record.TypeGauge, Value: ptr(s.v)})
			}
		}
		out = append(out, smp)
	}
	return out
}

// Two GPUs drawing 200 W and a ramp from 100 to 300 W over a 10 s window: 2000 J + 2000 J;
// with 1,000 output tokens, 4 J/token. The trapezoid is exact on a linear ramp.
func TestGPUEnergy(t *testing.T) {
	samples := gpuSamples(2, func(g int, t float64) float64 {
		if g == 0 {
			return 200
		}
		return 100 + 20*t
	}, func(float64) float64 { return 1980 })
	sv := ServerDuring(samples, 0, 10e9, nil)
	g := sv.GPU
	if g == nil || g.EnergyJ == nil {
		t.Fatalf("no GPU figures: %+v", g)
	}
	if math.Abs(*g.EnergyJ-4000) > 1e-6 || g.Coverage != 1 || math.Abs(*g.MeanPowerW-400) > 1e-6 {
		t.Errorf("energy %v J, coverage %v, mean %v W; want 4000, 1, 400", *g.EnergyJ, g.Coverage, *g.MeanPowerW)
	}
	g.setJoulesPerToken(1000)
	if g.JoulesPerToken == nil || math.Abs(*g.JoulesPerToken-4) > 1e-9 {
		t.Errorf("J/token %v", g.JoulesPerToken)
	}
	if len(g.GPUs) != 2 || len(g.Throttle) != 0 || *g.SMClockMin != 1980 || *g.TempMaxC != 60 || math.Abs(*g.UtilMean-0.9) > 1e-9 {
		t.Errorf("%+v", g)
	}
	// a window between samples: the ends are interpolated (200 W·2.05 s + mean of 121 and 162 W·2.05 s)
	g = ServerDuring(samples, 1.05e9, 3.1e9, nil).GPU
	if want := 200*2.05 + (121+162)/2.0*2.05; math.Abs(*g.EnergyJ-want) > 1e-6 {
		t.Errorf("interpolated ends: %v J, want %v", *g.EnergyJ, want)
	}
	// samples spanning half the window: energy of that half, and no J/token
	g = ServerDuring(samples, 5e9, 20e9, nil).GPU
	g.setJoulesPerToken(1000)
	if g.Coverage > 0.5 || g.JoulesPerToken != nil {
		t.Errorf("coverage %v, J/token %v", g.Coverage, g.JoulesPerToken)
	}
}

// A clock falling from 1980 to 1500 MHz halfway is throttling; a clock rising from idle, or
// wandering by 3%, is not.
func TestGPUThrottle(t *testing.T) {
	flat := func(int, float64) float64 { return 300 }
	for _, c := range []struct {
		name  string
		clock func(float64) float64
		want  bool
	}{
		{"drop halfway", func(t float64) float64 { return map[bool]float64{true: 1980, false: 1500}[t < 5] }, true},
		{"rise from idle", func(t float64) float64 { return map[bool]float64{true: 210, false: 1980}[t < 1] }, false},
		{"boost wander", func(t float64) float64 { return 1980 - 60*math.Mod(t, 2)/2 }, false},
	} {
		var acc Accumulator
		acc.SetHeader(&record.Header{Telemetry: gpuSamples(1, flat, c.clock)})
		for i := range 10 {
			r := record.Record{ID: i, Phase: record.PhaseMeasure, Sent: int64(i) * 1e9, FirstEvent: int64(i)*1e9 + 1e8, Done: int64(i)*1e9 + 1e9,
				OutputTokens: 100, OutputTokensSource: record.SourceServer, Events: []record.Event{{T: int64(i)*1e9 + 1e8, N: 100}}}
			acc.Add(&r)
		}
		s := acc.Summary()
		g := s.Server.GPU
		warned := strings.Contains(strings.Join(Texts(s.Warnings), "\n"), "SM clock fell")
		if (len(g.Throttle) > 0) != c.want || warned != c.want {
			t.Errorf("%s: throttle %+v, warned %v; want %v", c.name, g.Throttle, warned, c.want)
		}
		// the window is the measured requests' (a record sent at 0 has no sent time)
		if want := 300 * s.Window.Seconds() / 1000; g.JoulesPerToken == nil || math.Abs(*g.JoulesPerToken-want) > 1e-9 {
			t.Errorf("%s: J/token %v (window %v), want 300 W × window / 1000 tokens = %v", c.name, fmtPtr(g.JoulesPerToken), s.Window, want)
		}
	}
}

func fmtPtr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
