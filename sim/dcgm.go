package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// boardPowerW is each hardware preset's board power limit (datasheet TDP, W): the simulated
// GPU draws up to it when busy and a tenth of it when idle.
var boardPowerW = map[string]float64{"h100": 700, "h200": 700, "a100": 400, "l40s": 350, "l4": 72, "mi300x": 750, "b200": 1000}

// dcgmState is the simulated GPUs' power model as a dcgm-exporter shows it: the power at the
// last scrape and the energy counter, which integrates that power exactly between scrapes
// (power held constant from one scrape to the next), so that the counter's difference over
// any window is the energy the modelled power implies.
type dcgmState struct {
	mu       sync.Mutex
	last     time.Time
	power    float64 // W, per GPU
	energyMJ float64 // per GPU, mJ since the simulated boot
}

// dcgmUtil is the simulated utilisation: none with no request running, else 30% plus the
// running share of the batch limit (a batch of one keeps a GPU far from full).
func (s *Server) dcgmUtil() float64 {
	r := float64(s.stats.running.Load())
	if r <= 0 {
		return 0
	}
	return math.Min(1, 0.3+0.7*r/float64(max(1, s.cfg.MaxNumSeqs)))
}

// writeDCGM writes the simulated GPUs (--tp of them) as NVIDIA's dcgm-exporter does with its
// default counters: power, energy counter, GPU and memory-copy utilisation, SM clock,
// framebuffer used, temperature, clock event reasons and the last XID error, labelled with
// gpu, UUID, device and modelName. Every figure is modelled, and the model name says so.
func (s *Server) writeDCGM() []byte {
	tdp := boardPowerW[s.cfg.Hardware]
	if tdp == 0 {
		tdp = 700
	}
	util := s.dcgmUtil()
	d := &s.dcgm
	d.mu.Lock()
	now := time.Now()
	if d.last.IsZero() {
		d.energyMJ = 3.6e9 // an hour of 1 kW before the simulated boot: counters do not start at 0
	} else {
		d.energyMJ += d.power * now.Sub(d.last).Seconds() * 1e3
	}
	d.last, d.power = now, tdp*(0.1+0.9*util)
	power, energy := d.power, d.energyMJ
	d.mu.Unlock()

	reasons := 0.0
	if util == 0 {
		reasons = 1 // GPU idle
	}
	name := "NVIDIA H100 80GB HBM3 (simulated)"
	if hw, ok := hardwarePresets[s.cfg.Hardware]; ok {
		name = hw.Name
	}
	memMiB := 0.0
	if hw, ok := hardwarePresets[s.cfg.Hardware]; ok {
		memMiB = 0.9 * hw.MemoryGB * 1e9 / (1 << 20) // vLLM's default --gpu-memory-utilization
	}
	p := &promWriter{}
	for _, f := range []struct {
		name, typ, help string
		v               float64
	}{
		{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", 1980 * math.Min(1, 0.2+util)},
		{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", 35 + 35*util},
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", power},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", math.Round(energy)},
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", math.Round(100 * util)},
		{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", math.Round(60 * util)},
		{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", math.Round(memMiB)},
		{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", 0},
		{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons.", reasons},
	} {
		p.header(f.name, f.typ, f.help)
		for g := range max(1, s.cfg.TP) {
			p.b.WriteString(f.name + "{" + s.dcgmLabels(g, name) + "} " + strconv.FormatFloat(f.v, 'f', -1, 64) + "\n")
		}
	}
	return p.b.Bytes()
}

// dcgmLabels are dcgm-exporter's labels for simulated GPU g: a UUID stable for the model
// and hardware, so that two runs of one configuration describe the same GPUs.
func (s *Server) dcgmLabels(g int, name string) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", s.cfg.Hardware, s.cfg.ModelPreset, g)
	u := h.Sum64()
	uuid := fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(u>>32), uint16(u>>16), uint16(u), uint16(u>>48)^0x5157, u&0xffffffffffff)
	return fmt.Sprintf(`gpu="%d",UUID="%s",device="nvidia%d",modelName="%s",Hostname="servebench-sim"`, g, uuid, g, promEscape(name))
}

// handleDCGM serves writeDCGM.
func (s *Server) handleDCGM(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(s.writeDCGM()) //nolint:errcheck // nothing to do if the scraper left
}
