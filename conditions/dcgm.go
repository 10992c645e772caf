package conditions

import (
	"fmt"
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
// as nvidia-smi writes them so that a local and a remote run of the same GPU agree. Nothing
// when the scrape has no DCGM family.
func GPUFromDCGM(series []record.Series) []record.Condition {
	type gpu struct {
		name, uuid, driver, mig string
		vals                    map[string]float64
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
		g.name = cmpOr(g.name, s.Labels["modelName"])
		g.uuid = cmpOr(g.uuid, s.Labels["UUID"])
		g.driver = cmpOr(g.driver, s.Labels["DCGM_FI_DRIVER_VERSION"])
		g.mig = cmpOr(g.mig, s.Labels["GPU_I_PROFILE"])
		if s.Value != nil && *s.Value < dcgmBlank {
			g.vals[s.Name] = *s.Value
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

// dcgmBlank is where DCGM's "no value" sentinels start (DCGM_INT64_BLANK, 2^63 − 16: the
// exporter prints 9223372036854775794 for a field the GPU does not report).
const dcgmBlank = 9.2e18

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
