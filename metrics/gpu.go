package metrics

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"servebench/record"
)

// GPU is what this machine's GPUs did over the measurement window, from nvidia-smi's samples
// (record.GPUSource). Every figure covers all GPUs seen; nil when no sample carried it.
type GPU struct {
	GPUs    []string // indices seen, sorted
	Samples int      // readings inside the window
	// EnergyJ is the energy all GPUs drew over the window, J: per GPU the trapezoidal integral
	// of its power samples over the part of the window they span (the power at the window's
	// ends interpolated between the samples around them), summed over GPUs.
	EnergyJ *float64
	// Coverage is the share of the window that every GPU's power samples span (1 normally:
	// the first sample precedes the first request and the last follows the last one).
	Coverage float64
	// MeanPowerW is EnergyJ over the spanned time; MaxPowerW the highest reading of all GPUs
	// summed.
	MeanPowerW, MaxPowerW *float64
	// JoulesPerToken is EnergyJ / the window's output tokens (Summary.OutputTokens); nil when
	// the samples span less than minCoverage of the window, or no token was generated.
	JoulesPerToken *float64
	// SMClockMin and SMClockMax are the lowest and highest SM clock of any GPU in the window,
	// MHz.
	SMClockMin, SMClockMax *float64
	// Throttle is each GPU whose SM clock fell during the window (see clockFall).
	Throttle []ClockFall
	UtilMean *float64 // utilisation, 0 to 1, mean over the window's readings and GPUs
	MemMaxB  *float64 // the most memory any GPU used, bytes
	TempMaxC *float64 // the hottest any GPU ran, °C
}

// ClockFall is one GPU's SM clock falling inside the window: from the highest reading to a
// later lower one, MHz.
type ClockFall struct {
	GPU      string
	From, To float64
}

// minCoverage is the share of the window the power samples must span for a J/token: less
// (nvidia-smi died mid-run) would divide part of the energy by all of the tokens.
const minCoverage = 0.95

// throttleShare is the fall of the SM clock, as a share of its peak in the window, that is
// reported as throttling: boost clocks wander by a few percent under load, a thermal or
// power cap takes off a tenth or more.
const throttleShare = 0.10

// busyUtil is the utilisation below which a reading is left out of the throttle check: an
// idle GPU lowers its clock by design (the window's first and last moments may be nearly idle).
const busyUtil = 0.10

// gpuPoint is one GPU's reading.
type gpuPoint struct {
	t                                            int64
	power, clock, util, mem, temp                float64
	hasPower, hasClock, hasUtil, hasMem, hasTemp bool
}

// gpuDuring summarises the GPU samples (in time order) over [start, end]; nil without any.
func gpuDuring(ts []*record.Telemetry, start, end int64) *GPU {
	per := map[string][]gpuPoint{}
	g := &GPU{}
	var sums []float64
	for _, t := range ts {
		sum, any := 0.0, false
		for idx, p := range gpuReading(t) {
			per[idx] = append(per[idx], p)
			if p.hasPower && t.T >= start && t.T <= end {
				sum, any = sum+p.power, true
			}
		}
		if t.T >= start && t.T <= end {
			g.Samples++
			if any {
				sums = append(sums, sum)
			}
		}
	}
	if len(per) == 0 {
		return nil
	}
	g.GPUs = slices.Sorted(maps.Keys(per))
	if len(sums) > 0 {
		g.MaxPowerW = ptr(slices.Max(sums))
	}
	g.energy(per, start, end)
	var utils []float64
	for _, idx := range g.GPUs {
		pts := per[idx]
		for _, p := range pts {
			if p.t < start || p.t > end {
				continue
			}
			if p.hasClock {
				g.SMClockMin, g.SMClockMax = minPtr(g.SMClockMin, p.clock), maxPtr(g.SMClockMax, p.clock)
			}
			if p.hasUtil {
				utils = append(utils, p.util)
			}
			if p.hasMem {
				g.MemMaxB = maxPtr(g.MemMaxB, p.mem)
			}
			if p.hasTemp {
				g.TempMaxC = maxPtr(g.TempMaxC, p.temp)
			}
		}
		if f, ok := clockFall(pts, start, end); ok {
			f.GPU = idx
			g.Throttle = append(g.Throttle, f)
		}
	}
	if len(utils) > 0 {
		g.UtilMean = ptr(mean(utils))
	}
	return g
}

// gpuReading is one sample's readings by GPU index.
func gpuReading(t *record.Telemetry) map[string]gpuPoint {
	out := map[string]gpuPoint{}
	for i := range t.Series {
		sr := &t.Series[i]
		idx, ok := sr.Labels["gpu"]
		if !ok || sr.Value == nil {
			continue
		}
		p := out[idx]
		p.t = t.T
		v := *sr.Value
		switch sr.Name {
		case record.GPUPower:
			p.power, p.hasPower = v, true
		case record.GPUSMClock:
			p.clock, p.hasClock = v/1e6, true
		case record.GPUUtilization:
			p.util, p.hasUtil = v, true
		case record.GPUMemoryUsed:
			p.mem, p.hasMem = v, true
		case record.GPUTemperature:
			p.temp, p.hasTemp = v, true
		default:
			continue
		}
		out[idx] = p
	}
	return out
}

// energy sets EnergyJ, Coverage and MeanPowerW: per GPU, E = Σ (p_i + p_{i+1})/2 · (t_{i+1} −
// t_i) over its power samples inside the window, with the power at the window's ends (or at
// its first and last sample, when they lie inside) interpolated linearly.
func (g *GPU) energy(per map[string][]gpuPoint, start, end int64) {
	var total float64
	coverage := 1.0
	spanned := int64(0)
	for _, idx := range g.GPUs {
		var pts [][2]float64 // (t ns, W)
		for _, p := range per[idx] {
			if p.hasPower {
				pts = append(pts, [2]float64{float64(p.t), p.power})
			}
		}
		e, lo, hi, ok := trapezoid(pts, float64(start), float64(end))
		if !ok {
			return // a GPU without power readings in the window: no energy for all of them
		}
		total += e
		coverage = min(coverage, (hi-lo)/float64(end-start))
		spanned = max(spanned, int64(hi-lo))
	}
	g.EnergyJ, g.Coverage = ptr(total), coverage
	if spanned > 0 {
		g.MeanPowerW = ptr(total / (float64(spanned) / 1e9))
	}
}

// trapezoid integrates the piecewise-linear curve through pts (time order, ns and W) over
// [start, end] ∩ [first, last], in J; it also returns the span integrated. False when no
// span lies inside the window.
func trapezoid(pts [][2]float64, start, end float64) (e, lo, hi float64, ok bool) {
	if len(pts) < 2 || end <= start {
		return 0, 0, 0, false
	}
	lo, hi = max(start, pts[0][0]), min(end, pts[len(pts)-1][0])
	if hi <= lo {
		return 0, 0, 0, false
	}
	at := func(t float64) float64 { // linear interpolation; t within [first, last]
		i, _ := slices.BinarySearchFunc(pts, t, func(p [2]float64, t float64) int { return cmp.Compare(p[0], t) })
		if i < len(pts) && pts[i][0] == t {
			return pts[i][1]
		}
		a, b := pts[i-1], pts[i]
		return a[1] + (b[1]-a[1])*(t-a[0])/(b[0]-a[0])
	}
	curve := [][2]float64{{lo, at(lo)}}
	for _, p := range pts {
		if p[0] > lo && p[0] < hi {
			curve = append(curve, p)
		}
	}
	curve = append(curve, [2]float64{hi, at(hi)})
	for i := 1; i < len(curve); i++ {
		e += (curve[i-1][1] + curve[i][1]) / 2 * (curve[i][0] - curve[i-1][0]) / 1e9
	}
	return e, lo, hi, true
}

// clockFall finds the largest fall of a GPU's SM clock inside the window, from a reading to
// any later one (readings of an idle GPU left out), and reports it when it exceeds
// throttleShare of the highest reading before it. A rising clock (a GPU waking from idle) is
// no fall.
func clockFall(pts []gpuPoint, start, end int64) (ClockFall, bool) {
	var best ClockFall
	peak := math.Inf(-1)
	for _, p := range pts {
		if p.t < start || p.t > end || !p.hasClock || (p.hasUtil && p.util < busyUtil) {
			continue
		}
		peak = max(peak, p.clock)
		if peak-p.clock > best.From-best.To {
			best = ClockFall{From: peak, To: p.clock}
		}
	}
	return best, best.From > 0 && best.From-best.To > throttleShare*best.From
}

// gpuWarnings say when a GPU throttled inside the window or its samples cover too little of it.
func gpuWarnings(s *Summary) []Warning {
	if s.Server == nil || s.Server.GPU == nil {
		return nil
	}
	g := s.Server.GPU
	var out []Warning
	for _, f := range g.Throttle {
		out = append(out, warn(Distorts, "check cooling and power limits (nvidia-smi -q -d PERFORMANCE) before comparing this run",
			"GPU %s's SM clock fell from %.0f to %.0f MHz (%.0f%%) during the window: thermal or power throttling, so the server slowed for a reason outside it",
			f.GPU, f.From, f.To, 100*(f.To-f.From)/f.From))
	}
	if g.EnergyJ != nil && g.Coverage < minCoverage {
		out = append(out, warn(Info, "", "the GPU samples span only %.0f%% of the window (nvidia-smi stopped or started late): no J/token", 100*g.Coverage))
	}
	return out
}

// setJoulesPerToken divides the window's energy by its output tokens.
func (g *GPU) setJoulesPerToken(tokens int64) {
	if g == nil || g.EnergyJ == nil || g.Coverage < minCoverage || tokens <= 0 {
		return
	}
	g.JoulesPerToken = ptr(*g.EnergyJ / float64(tokens))
}

func minPtr(p *float64, v float64) *float64 {
	if p == nil || v < *p {
		return ptr(v)
	}
	return p
}

func maxPtr(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return ptr(v)
	}
	return p
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}
