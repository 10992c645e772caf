package conditions

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"servebench/record"
)

// GPUFromDCGM reads a remote server's GPU conditions from one dcgm-exporter scrape: from
// every GPU family's labels the model (modelName), UUID, driver (DCGM_FI_DRIVER_VERSION, when
// the exporter adds it) and MIG profile (GPU_I_PROFILE), and from the families that carry
// settings, when the exporter's counters file includes them, the power limits, application
// and maximum SM clocks, persistence, MIG and ECC modes, PCIe link and CUDA version, written
// as nvidia-smi writes them so that a local and a remote run of the same GPU agree; whether
// clocks are locked from the clock event reasons' 0x2 bit, and the NVLink links from the
// per-link bandwidth families ("present" where only the total is exported). Nothing
// when the scrape has no DCGM family.
func GPUFromDCGM(series []record.Series) []record.Condition {
	type gpu struct {
		name, uuid, driver, mig string
		vals                    map[string]float64
		// per-link NVLink families seen, and those with a value (a link the GPU has)
		linksSeen, linksUp int
	}
	gpus := map[string]*gpu{}
	for _, s := range series {
		if !strings.HasPrefix(s.Name, "DCGM_FI_") {
			continue
		}
		idx, ok := s.Labels["gpu"]
		if !ok {
			continue
		}
		g := gpus[idx]
		if g == nil {
			g = &gpu{vals: map[string]float64{}}
			gpus[idx] = g
		}
		g.name = cmp.Or(g.name, s.Labels["modelName"])
		g.uuid = cmp.Or(g.uuid, s.Labels["UUID"])
		g.driver = cmp.Or(g.driver, s.Labels["DCGM_FI_DRIVER_VERSION"])
		g.mig = cmp.Or(g.mig, s.Labels["GPU_I_PROFILE"])
		if s.Value != nil && *s.Value < dcgmBlank {
			g.vals[s.Name] = *s.Value
		}
		if nvlinkLaneRe.MatchString(s.Name) {
			g.linksSeen++
			if s.Value != nil && *s.Value < dcgmBlank {
				g.linksUp++
			}
		}
	}
	if len(gpus) == 0 {
		return nil
	}
	idxs := slices.Sorted(func(yield func(string) bool) {
		for k := range gpus {
			if !yield(k) {
				return
			}
		}
	})
	col := func(f func(*gpu) string) string {
		var vs []string
		for _, i := range idxs {
			v := f(gpus[i])
			if v == "" {
				return ""
			}
			vs = append(vs, v)
		}
		return uniform(vs)
	}
	num := func(family, format string, conv func(float64) string) func(*gpu) string {
		return func(g *gpu) string {
			v, ok := g.vals[family]
			if !ok {
				return ""
			}
			if conv != nil {
				return conv(v)
			}
			return fmt.Sprintf(format, v)
		}
	}
	enabled := func(v float64) string { return map[bool]string{true: "Enabled", false: "Disabled"}[v != 0] }
	var f facts
	name := col(func(g *gpu) string { return g.name })
	if len(idxs) > 1 && name != "" && !strings.Contains(name, ";") {
		name = fmt.Sprintf("%d x %s", len(idxs), name)
	}
	f.put(GPUName, name)
	f.put(GPUCount, len(idxs))
	for _, kv := range []struct {
		key string
		get func(*gpu) string
	}{
		{GPUUUID, func(g *gpu) string { return g.uuid }},
		{GPUDriver, func(g *gpu) string { return g.driver }},
		{GPUMIGProfile, func(g *gpu) string { return g.mig }},
		{GPUPowerLimit, num("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "%.2f W", nil)},
		{GPUPowerDefault, num("DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", "%.2f W", nil)},
		{GPUAppClock, num("DCGM_FI_DEV_APP_SM_CLOCK", "%.0f MHz", nil)},
		{GPUMaxClock, num("DCGM_FI_DEV_MAX_SM_CLOCK", "%.0f MHz", nil)},
		{GPUPersistence, num("DCGM_FI_DEV_PERSISTENCE_MODE", "", enabled)},
		{GPUMIG, num("DCGM_FI_DEV_MIG_MODE", "", enabled)},
		{GPUECC, num("DCGM_FI_DEV_ECC_CURRENT", "", enabled)},
		{GPUCUDA, num("DCGM_FI_CUDA_DRIVER_VERSION", "", func(v float64) string {
			return strconv.Itoa(int(v)/1000) + "." + strconv.Itoa(int(v)%1000/10)
		})},
		{GPUClocksLocked, func(g *gpu) string {
			for _, fam := range []string{"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"} {
				if v, ok := g.vals[fam]; ok {
					return map[bool]string{true: "yes", false: "no"}[uint64(v)&reasonAppClocks != 0]
				}
			}
			return ""
		}},
		{GPUNVLink, func(g *gpu) string {
			switch {
			case g.linksUp == 1:
				return "1 link"
			case g.linksUp > 1:
				return strconv.Itoa(g.linksUp) + " links"
			case g.linksSeen > 0:
				return "none"
			}
			if _, ok := g.vals["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"]; ok {
				return "present"
			}
			return ""
		}},
		{GPUPCIe, func(g *gpu) string {
			gen, ok1 := g.vals["DCGM_FI_DEV_PCIE_LINK_GEN"]
			w, ok2 := g.vals["DCGM_FI_DEV_PCIE_LINK_WIDTH"]
			if !ok1 || !ok2 {
				return ""
			}
			return fmt.Sprintf("gen%.0f x%.0f", gen, w)
		}},
	} {
		if v := col(kv.get); v != "" {
			f.put(kv.key, v)
		}
	}
	return f
}

// nvlinkLaneRe names DCGM's per-link NVLink bandwidth families (DCGM_FI_DEV_NVLINK_BANDWIDTH_L0
// to _L17): DCGM gives a value for each link the GPU has and its blank for the others.
var nvlinkLaneRe = regexp.MustCompile(`^DCGM_FI_DEV_NVLINK_BANDWIDTH_L\d+$`)

// reasonAppClocks is NVML's clock event reason "applications clocks setting" (0x2), the
// reason the driver gives while a user setting (-ac, -lgc, -lmc) holds the clocks.
const reasonAppClocks = 0x2

// dcgmBlank is where DCGM's "no value" sentinels start (DCGM_INT64_BLANK, 2^63 − 16: the
// exporter prints 9223372036854775794 for a field the GPU does not report).
const dcgmBlank = 9.2e18
