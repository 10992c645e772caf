package metrics

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"servebench/record"
)

// gpuField maps a series to a field of a GPU reading and the scale to its unit there: W,
// MHz, 0–1, bytes, °C, J.
type gpuField struct {
	set    func(p *gpuPoint, v float64, name string)
	scale  float64
	energy bool // a cumulative energy counter
}

// gpuFields reads nvidia-smi's series (base units, see package telemetry) and
// dcgm-exporter's families (NVIDIA's names and units: W, mJ, %, MHz, MiB, °C), so that a
// remote server's GPUs give the same figures as a local one's.
var gpuFields = map[string]gpuField{
	record.GPUPower:                        {setPower, 1, false},
	"DCGM_FI_DEV_POWER_USAGE":              {setPower, 1, false},
	record.GPUEnergy:                       {setEnergy, 1, true},
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {setEnergy, 1e-3, true},
	record.GPUSMClock:                      {func(p *gpuPoint, v float64, _ string) { p.clock, p.hasClock = v, true }, 1e-6, false},
	"DCGM_FI_DEV_SM_CLOCK":                 {func(p *gpuPoint, v float64, _ string) { p.clock, p.hasClock = v, true }, 1, false},
	record.GPUUtilization:                  {func(p *gpuPoint, v float64, _ string) { p.util, p.hasUtil = v, true }, 1, false},
	"DCGM_FI_DEV_GPU_UTIL":                 {func(p *gpuPoint, v float64, _ string) { p.util, p.hasUtil = v, true }, 0.01, false},
	"DCGM_FI_DEV_MEM_COPY_UTIL":            {func(p *gpuPoint, v float64, _ string) { p.copyUtil, p.hasCopyUtil = v, true }, 0.01, false},
	record.GPUMemoryUsed:                   {func(p *gpuPoint, v float64, _ string) { p.mem, p.hasMem = v, true }, 1, false},
	"DCGM_FI_DEV_FB_USED":                  {func(p *gpuPoint, v float64, _ string) { p.mem, p.hasMem = v, true }, 1 << 20, false},
	record.GPUTemperature:                  {func(p *gpuPoint, v float64, _ string) { p.temp, p.hasTemp = v, true }, 1, false},
	"DCGM_FI_DEV_GPU_TEMP":                 {func(p *gpuPoint, v float64, _ string) { p.temp, p.hasTemp = v, true }, 1, false},
	record.GPUClockEventReasons:            {setReasons, 1, false},
	"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS":   {setReasons, 1, false},
	"DCGM_FI_DEV_CLOCKS_EVENT_REASONS":     {setReasons, 1, false},
	"DCGM_FI_DEV_XID_ERRORS":               {func(p *gpuPoint, v float64, _ string) { p.xid = int(v) }, 1, false},
}

func setPower(p *gpuPoint, v float64, field string) {
	p.power, p.hasPower, p.powerField = v, true, field
}

func setEnergy(p *gpuPoint, v float64, field string) {
	p.energy, p.hasEnergy, p.energyField = v, true, field
}

func setReasons(p *gpuPoint, v float64, _ string) {
	if v >= 0 {
		p.reasons, p.hasReasons = uint64(v), true
	}
}

// isGPUSeries reports whether a series is a GPU reading gpuDuring understands.
func isGPUSeries(name string) bool {
	_, ok := gpuFields[name]
	return ok
}

// gpuReading is one sample's readings by GPU index (the gpu label, which nvidia-smi's
// series and dcgm-exporter's both carry), with the GPU's UUID where a label gives it.
func gpuReading(t *record.Telemetry) map[string]gpuPoint {
	out := map[string]gpuPoint{}
	for i := range t.Series {
		sr := &t.Series[i]
		f, known := gpuFields[sr.Name]
		idx, ok := sr.Labels["gpu"]
		if !known || !ok || sr.Value == nil || *sr.Value >= dcgmBlank {
			continue
		}
		p := out[idx]
		p.t = t.T
		p.uuid = cmp.Or(p.uuid, sr.Labels["uuid"], sr.Labels["UUID"])
		field := sr.Labels["field"]
		if field == "" {
			field = sr.Name
		}
		f.set(&p, *sr.Value*f.scale, field)
		out[idx] = p
	}
	return out
}

// dcgmBlank is where DCGM's "no value" sentinels start (2^63 − 16 and up: dcgm-exporter
// prints 9223372036854775794 for a field the GPU does not report).
const dcgmBlank = 9.2e18

// pickGPUSamples picks the GPU readings of a window: nvidia-smi's on this machine when it
// sampled, else the first scraped source (by name) whose samples carry GPU series, such as a
// dcgm-exporter beside a remote server. A scraped source with an energy counter is preferred
// to nvidia-smi readings without one: nvidia-smi's query interface has no energy counter, so
// a dcgm-exporter scraped beside a local server gives the exact energy.
func pickGPUSamples(ok map[string][]*record.Telemetry) (string, []*record.Telemetry) {
	var scraped, counted string
	for _, src := range sourcesOf(ok) {
		if src == record.GPUSource {
			continue
		}
		for _, t := range ok[src] {
			if scraped == "" && slices.ContainsFunc(t.Series, func(s record.Series) bool { return isGPUSeries(s.Name) }) {
				scraped = src
			}
			if counted == "" && slices.ContainsFunc(t.Series, func(s record.Series) bool { return gpuFields[s.Name].energy }) {
				counted = src
			}
		}
	}
	local := ok[record.GPUSource]
	localCounted := slices.ContainsFunc(local, func(t *record.Telemetry) bool {
		return slices.ContainsFunc(t.Series, func(s record.Series) bool { return s.Name == record.GPUEnergy })
	})
	switch {
	case len(local) > 0 && (localCounted || counted == ""):
		return record.GPUSource, local
	case counted != "":
		return counted, ok[counted]
	case scraped != "":
		return scraped, ok[scraped]
	}
	return "", nil
}

// clockReasons are the bits of NVML's clocks event reasons (nvmlClocksEventReason*, the
// same bits in nvidia-smi's clocks_event_reasons.active and DCGM's clock throttle reasons),
// their names, and whether each slows the GPU below its settings. GPU idle (bit 0) is left
// out: busy readings only are counted.
var clockReasons = []struct {
	bit    uint64
	name   string
	limits bool
}{
	{0x2, "applications clocks setting", false},
	{0x4, "SW power cap", true},
	{0x8, "HW slowdown", true},
	{0x10, "sync boost", false},
	{0x20, "SW thermal slowdown", true},
	{0x40, "HW thermal slowdown", true},
	{0x80, "HW power brake slowdown", true},
	{0x100, "display clocks setting", false},
}

// reasonTally counts a GPU's busy readings with reasons, and each reason's.
type reasonTally struct {
	seen     bool // the driver gave reasons, busy or not: no guessing from the clock
	readings int
	counts   map[uint64]int
	unknown  uint64 // bits outside clockReasons
}

func (r *reasonTally) add(bits uint64) {
	r.readings++
	if r.counts == nil {
		r.counts = map[uint64]int{}
	}
	known := uint64(1)
	for _, c := range clockReasons {
		known |= c.bit
		if bits&c.bit != 0 {
			r.counts[c.bit]++
		}
	}
	r.unknown |= bits &^ known
}

func (r *reasonTally) result(gpu string) ClockReasons {
	out := ClockReasons{GPU: gpu, Readings: r.readings}
	for _, c := range clockReasons {
		if n := r.counts[c.bit]; n > 0 {
			out.Active = append(out.Active, ReasonCount{Name: c.name, Readings: n, Limits: c.limits})
		}
	}
	if r.unknown != 0 {
		out.Active = append(out.Active, ReasonCount{Name: "reason bits 0x" + strconv.FormatUint(r.unknown, 16), Readings: 0})
	}
	return out
}

// limiting lists a GPU's reasons that slowed it, as "SW power cap in 12 of 30 readings".
func (c ClockReasons) limiting() []string {
	var out []string
	for _, a := range c.Active {
		if a.Limits {
			out = append(out, a.Name+" in "+strconv.Itoa(a.Readings)+" of "+strconv.Itoa(c.Readings)+" busy readings")
		}
	}
	return out
}

// joinAnd joins with commas and a final "and".
func joinAnd(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
