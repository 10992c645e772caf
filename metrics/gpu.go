package metrics

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"servebench/record"
)

// GPU is what this machine's GPUs did over the measurement window, from nvidia-smi's samples
// (record.GPUSource). Every figure covers all GPUs seen; nil when no sample carried it.
type GPU struct {
	// Source is where the readings came from: record.GPUSource (nvidia-smi on this machine)
	// or a scraped dcgm-exporter URL.
	Source  string
	GPUs    []string // indices seen, sorted
	Samples int      // readings inside the window
	// UUIDs are the GPUs' UUIDs by index, where the readings carry them.
	UUIDs map[string]string
	// Charged are the GPUs whose energy is the server's (the ones its processes hold memory
	// on, or, where that is unknown, the ones whose utilisation shows work): EnergyJ, mean
	// power and J/token cover these alone. ChargedBy says how they were told ("placement",
	// "utilisation"); NotCharged says why no energy is the server's, when none is.
	Charged    []string
	ChargedBy  string
	NotCharged string
	// EnergyMethod says how EnergyJ was measured: "counter" (the difference of the GPUs'
	// cumulative energy counters over the window) or "integrated" (power samples
	// integrated); PowerField names the power field read (power.draw.average, power.draw,
	// DCGM_FI_DEV_POWER_USAGE) and EnergyField the counter.
	EnergyMethod, PowerField, EnergyField string
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
	// Throttle is each GPU whose SM clock fell during the window (see clockFall), for GPUs
	// whose driver gave no clock event reasons: a guess from the clock alone.
	Throttle []ClockFall
	// Reasons are the driver's clock event reasons seen in each GPU's busy readings of the
	// window (idle left out): why its clocks were below their maximum, not a guess.
	Reasons []ClockReasons
	// XID are the XID errors (the driver's error codes) a GPU reported inside the window.
	XID []XIDError
	// MemCopyUtilMean is the memory-copy utilisation (DCGM_FI_DEV_MEM_COPY_UTIL), 0 to 1.
	MemCopyUtilMean *float64

	per        map[string]*gpuEnergy // each GPU's energy over the window, for Charge
	start, end int64
	UtilMean   *float64 // utilisation, 0 to 1, mean over the window's readings and GPUs
	MemMaxB    *float64 // the most memory any GPU used, bytes
	TempMaxC   *float64 // the hottest any GPU ran, °C
}

// ClockReasons is one GPU's clock event reasons over the window's busy readings.
type ClockReasons struct {
	GPU      string
	Readings int           // busy readings that carried the reasons
	Active   []ReasonCount // reasons active in at least one of them, in bit order
}

// ReasonCount is one clock event reason and the busy readings it was active in; Limits
// says whether it slows the GPU below what it was set to do (power cap, thermal and hardware
// slowdowns), rather than being a setting (application clocks, sync boost).
type ReasonCount struct {
	Name     string
	Readings int
	Limits   bool
}

// XIDError is an XID error code a GPU reported during the window.
type XIDError struct {
	GPU  string
	Code int
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
	energy, copyUtil                             float64
	hasEnergy, hasCopyUtil, hasReasons           bool
	reasons                                      uint64
	xid                                          int
	uuid, powerField, energyField                string
}

// gpuEnergy is one GPU's energy over the window: J, the span measured, and how.
type gpuEnergy struct {
	j, lo, hi   float64
	counter, ok bool
	busy        bool // a reading in the window showed utilisation of at least busyUtil
}

// gpuDuring summarises the GPU samples (in time order) over [start, end]; nil without any.
// Every GPU seen is charged until Charge says which are the server's.
func gpuDuring(ts []*record.Telemetry, start, end int64) *GPU {
	per := map[string][]gpuPoint{}
	g := &GPU{UUIDs: map[string]string{}}
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
	g.start, g.end = start, end
	g.energy(per, start, end)
	var utils, copies []float64
	for _, idx := range g.GPUs {
		pts := per[idx]
		var rs reasonTally
		for _, p := range pts {
			if p.t < start || p.t > end {
				continue
			}
			if p.uuid != "" {
				g.UUIDs[idx] = p.uuid
			}
			if p.hasUtil && p.util >= busyUtil {
				g.per[idx].busy = true
			}
			if p.hasCopyUtil {
				copies = append(copies, p.copyUtil)
			}
			if p.xid != 0 && !slices.Contains(g.XID, XIDError{idx, p.xid}) {
				g.XID = append(g.XID, XIDError{idx, p.xid})
			}
			if p.hasReasons {
				rs.seen = true
				if !(p.hasUtil && p.util < busyUtil) {
					rs.add(p.reasons)
				}
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
		if rs.readings > 0 {
			g.Reasons = append(g.Reasons, rs.result(idx))
		} else if f, ok := clockFall(pts, start, end); ok && !rs.seen {
			f.GPU = idx
			g.Throttle = append(g.Throttle, f)
		}
	}
	if len(utils) > 0 {
		g.UtilMean = ptr(mean(utils))
	}
	if len(copies) > 0 {
		g.MemCopyUtilMean = ptr(mean(copies))
	}
	g.charge(g.GPUs)
	return g
}

// energy measures each GPU's energy over the window: from its cumulative energy counter
// where every reading of the window has one and it never ran backwards (E = c(end) −
// c(start), the counter at the window's ends interpolated linearly between the readings
// around them), else by the trapezoidal integral of its power samples, E = Σ (p_i +
// p_{i+1})/2 · (t_{i+1} − t_i), with the power at the window's ends (or at its first and
// last sample, when they lie inside) interpolated linearly.
func (g *GPU) energy(per map[string][]gpuPoint, start, end int64) {
	g.per = map[string]*gpuEnergy{}
	for _, idx := range g.GPUs {
		var pw, en [][2]float64 // (t ns, W) and (t ns, J)
		for _, p := range per[idx] {
			if p.hasPower {
				pw = append(pw, [2]float64{float64(p.t), p.power})
				g.PowerField = cmp.Or(g.PowerField, p.powerField)
			}
			if p.hasEnergy {
				en = append(en, [2]float64{float64(p.t), p.energy})
				g.EnergyField = cmp.Or(g.EnergyField, p.energyField)
			}
		}
		e := &gpuEnergy{}
		if len(en) == len(per[idx]) && monotone(en) {
			if lo, hi, ok := windowSpan(en, float64(start), float64(end)); ok {
				e.j, e.lo, e.hi, e.counter, e.ok = at(en, hi)-at(en, lo), lo, hi, true, true
			}
		}
		if !e.ok {
			e.j, e.lo, e.hi, e.ok = trapezoid(pw, float64(start), float64(end))
		}
		g.per[idx] = e
	}
}

// charge sets EnergyJ, Coverage, MeanPowerW and EnergyMethod over the GPUs charged: none
// when one of them has no energy for the window.
func (g *GPU) charge(idxs []string) {
	g.Charged = idxs
	g.EnergyJ, g.MeanPowerW, g.Coverage, g.EnergyMethod = nil, nil, 0, ""
	if len(idxs) == 0 {
		return
	}
	var total float64
	coverage, spanned, counters := 1.0, 0.0, 0
	for _, idx := range idxs {
		e := g.per[idx]
		if e == nil || !e.ok {
			return // a GPU without power readings in the window: no energy for all of them
		}
		total += e.j
		coverage = min(coverage, (e.hi-e.lo)/float64(g.end-g.start))
		spanned = max(spanned, e.hi-e.lo)
		if e.counter {
			counters++
		}
	}
	g.EnergyJ, g.Coverage = ptr(total), coverage
	if spanned > 0 {
		g.MeanPowerW = ptr(total / (spanned / 1e9))
	}
	switch counters {
	case len(idxs):
		g.EnergyMethod = "counter"
	case 0:
		g.EnergyMethod = "integrated"
	default:
		g.EnergyMethod = "counter and integrated"
	}
}

// EnergyByGPU is each charged GPU's energy over the window, J, by index; nil when the window
// has no energy.
func (g *GPU) EnergyByGPU() map[string]float64 {
	if g == nil || g.EnergyJ == nil {
		return nil
	}
	out := map[string]float64{}
	for _, idx := range g.Charged {
		out[idx] = g.per[idx].j
	}
	return out
}

// monotone reports whether a counter never ran backwards (a driver reload resets it).
func monotone(pts [][2]float64) bool {
	for i := 1; i < len(pts); i++ {
		if pts[i][1] < pts[i-1][1] {
			return false
		}
	}
	return true
}

// windowSpan is [start, end] ∩ [first, last] of pts; false when empty.
func windowSpan(pts [][2]float64, start, end float64) (lo, hi float64, ok bool) {
	if len(pts) < 2 || end <= start {
		return 0, 0, false
	}
	lo, hi = max(start, pts[0][0]), min(end, pts[len(pts)-1][0])
	return lo, hi, hi > lo
}

// at interpolates pts (time order) linearly at t, which lies within [first, last].
func at(pts [][2]float64, t float64) float64 {
	i, _ := slices.BinarySearchFunc(pts, t, func(p [2]float64, t float64) int { return cmp.Compare(p[0], t) })
	if i < len(pts) && pts[i][0] == t {
		return pts[i][1]
	}
	a, b := pts[i-1], pts[i]
	return a[1] + (b[1]-a[1])*(t-a[0])/(b[0]-a[0])
}

// trapezoid integrates the piecewise-linear curve through pts (time order, ns and W) over
// [start, end] ∩ [first, last], in J; it also returns the span integrated. False when no
// span lies inside the window.
func trapezoid(pts [][2]float64, start, end float64) (e, lo, hi float64, ok bool) {
	lo, hi, ok = windowSpan(pts, start, end)
	if !ok {
		return 0, 0, 0, false
	}
	curve := [][2]float64{{lo, at(pts, lo)}}
	for _, p := range pts {
		if p[0] > lo && p[0] < hi {
			curve = append(curve, p)
		}
	}
	curve = append(curve, [2]float64{hi, at(pts, hi)})
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
	if g.NotCharged != "" {
		out = append(out, warn(Info, "", "no GPU energy per token: %s", g.NotCharged))
	} else if g.ChargedBy == "utilisation" && len(g.Charged) < len(g.GPUs) {
		out = append(out, warn(Info, "", "GPU energy counts GPU %s, the ones whose utilisation showed work (where the server runs is unknown)", strings.Join(g.Charged, ", ")))
	}
	for _, r := range g.Reasons {
		if l := r.limiting(); len(l) > 0 {
			out = append(out, warn(Distorts, "check cooling and power limits (nvidia-smi -q -d PERFORMANCE) before comparing this run",
				"GPU %s's clocks were held down by the driver: %s, so the server slowed for a reason outside it", r.GPU, joinAnd(l)))
		}
	}
	for _, f := range g.Throttle {
		out = append(out, warn(Distorts, "check cooling and power limits (nvidia-smi -q -d PERFORMANCE) before comparing this run",
			"GPU %s's SM clock fell from %.0f to %.0f MHz (%.0f%%) during the window: thermal or power throttling, guessed from the clock (the driver's reasons were not read), so the server may have slowed for a reason outside it",
			f.GPU, f.From, f.To, 100*(f.To-f.From)/f.From))
	}
	for _, x := range g.XID {
		out = append(out, warn(Distorts, "read the driver's log (dmesg) for the error before trusting this run",
			"GPU %s reported XID error %d during the window", x.GPU, x.Code))
	}
	if g.EnergyJ != nil && g.Coverage < minCoverage {
		out = append(out, warn(Info, "", "the GPU samples span only %.0f%% of the window (nvidia-smi stopped or started late): no J/token", 100*g.Coverage))
	}
	return out
}

// Charge decides which GPUs' energy is the server's, from placement (the header's
// server.placement: the UUIDs of the GPUs its processes hold memory on, "cpu", or "" when
// unknown) and process (the process found listening, for the note), and sets J/token over
// the window's output tokens:
//   - the GPUs the server holds memory on, when their readings carry UUIDs;
//   - none for a server that holds memory on no GPU: a note says why there is no J/token
//     (an idle GPU's draw charged to a CPU server's tokens is not its energy);
//   - where the placement is unknown (a remote server, a process in a container), the GPUs
//     whose utilisation reached busyUtil in a reading of the window; none when none did.
func (g *GPU) Charge(placement, process string, tokens int64) {
	if g == nil {
		return
	}
	g.NotCharged, g.ChargedBy = "", ""
	proc := "the server's process"
	if process != "" {
		proc += " (pid " + process + ")"
	}
	var idxs []string
	switch {
	case placement == record.PlacementCPU:
		g.NotCharged = proc + " holds memory on no GPU: it ran on the CPU, and the GPUs' draw is not its energy"
	case placement != "" && len(g.UUIDs) > 0:
		uuids := strings.Split(placement, ",")
		for _, idx := range g.GPUs {
			if slices.Contains(uuids, g.UUIDs[idx]) {
				idxs = append(idxs, idx)
			}
		}
		g.ChargedBy = "placement"
		if len(idxs) == 0 {
			g.NotCharged = proc + " holds memory on " + placement + ", none of the GPUs sampled"
		}
	default:
		for _, idx := range g.GPUs {
			if e := g.per[idx]; e != nil && e.busy {
				idxs = append(idxs, idx)
			}
		}
		g.ChargedBy = "utilisation"
		if len(idxs) == 0 {
			g.NotCharged = fmt.Sprintf("no GPU's utilisation reached %.0f%% in the window and where the server runs is unknown: it did not run on these GPUs", 100*busyUtil)
		}
	}
	mean := g.MeanPowerW
	g.charge(idxs)
	if len(idxs) == 0 {
		g.MeanPowerW = mean // the GPUs' draw, which the note says is not the server's
	}
	g.setJoulesPerToken(tokens)
}

// setJoulesPerToken divides the window's energy by its output tokens.
func (g *GPU) setJoulesPerToken(tokens int64) {
	if g == nil || g.EnergyJ == nil || g.Coverage < minCoverage || tokens <= 0 || len(g.Charged) == 0 {
		g.JoulesPerToken = nil
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
