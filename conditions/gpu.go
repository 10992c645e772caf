package conditions

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"servebench/record"
)

// SMIQuery is the --query-gpu field list whose CSV output (--format=csv,noheader) GPUFromSMI
// reads when the driver answers nothing richer; capture runs nvidia-smi with it, so the
// columns and their parser cannot drift apart.
const SMIQuery = "name,driver_version,memory.total"

// SMIRichQuery is SMIQuery followed by the settings that change results: the GPU's UUID, its
// enforced and default power limits, application and maximum SM clocks, persistence, MIG
// and ECC modes, compute mode and its PCIe link (the generation the GPU and the host can
// reach together, and the width now). nvidia-smi refuses a whole query when one field is
// unknown to its driver, so capture asks SMIQuery alone when this one fails.
const SMIRichQuery = SMIQuery + ",uuid,enforced.power.limit,power.default_limit," +
	"clocks.applications.graphics,clocks.max.sm,persistence_mode,mig.mode.current," +
	"ecc.mode.current,compute_mode,pcie.link.gen.max,pcie.link.width.current"

// GPU condition keys beyond name, count, memory and driver. A lowered power limit, locked
// application clocks, MIG partitioning, ECC or a narrower PCIe link each change what a GPU
// can do, so each is a condition (group gpu: blocking).
const (
	GPUUUID         = "gpu.uuid"
	GPUPowerLimit   = "gpu.power_limit"         // enforced.power.limit: what the GPU holds to now
	GPUPowerDefault = "gpu.power_limit_default" // power.default_limit: what it would hold to
	GPUAppClock     = "gpu.clocks.applications" // clocks.applications.graphics
	GPUMaxClock     = "gpu.clocks.max_sm"       // clocks.max.sm
	GPUPersistence  = "gpu.persistence"
	GPUMIG          = "gpu.mig"
	GPUMIGProfile   = "gpu.mig_profile" // the MIG instances' profiles, from nvidia-smi -L
	GPUECC          = "gpu.ecc"
	GPUComputeMode  = "gpu.compute_mode"
	GPUPCIe         = "gpu.pcie"
	GPUCUDA         = "gpu.cuda" // the CUDA version the driver supports
	// GPUClocksLocked is whether the driver says clocks are held by a user setting: NVML's
	// "applications clocks setting" reason, the one it gives for -ac and for -lgc/-lmc locks
	// (the locks themselves have no getter in nvidia-smi or NVML). "yes" or "no".
	GPUClocksLocked = "gpu.clocks.locked"
	// GPUNVLink is the NVLink links a GPU has up ("18 links"), or "none"; GPUNVLinkSpeed is
	// their speed each, as nvidia-smi nvlink -s writes it ("26.562 GB/s").
	GPUNVLink      = "gpu.nvlink"
	GPUNVLinkSpeed = "gpu.nvlink_speed"
	// Placement is where the server runs: the UUIDs of the GPUs its processes hold memory
	// on, or "cpu"; a CPU run and a GPU run of one model are not comparable by accident.
	Placement = record.ServerPlacement
)

// Placement values.
const PlacementCPU = record.PlacementCPU

// GPUFromSMI reads nvidia-smi's answer to SMIQuery or SMIRichQuery, lines such as
// "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB" and the rich columns after them: name (with
// a count when there are several, as "2 x NVIDIA H100 80GB HBM3"), count, driver, memory,
// and from the rich query the settings listed there. A field the GPU cannot report ("[N/A]",
// "[Not Supported]") is left out. Nothing when no line reads.
func GPUFromSMI(out string) []record.Condition {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		parts := strings.Split(line, ",")
		if len(parts) < 3 {
			continue
		}
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		rows = append(rows, parts)
	}
	if len(rows) == 0 {
		return nil
	}
	col := func(i int) string {
		var vs []string
		for _, r := range rows {
			if i >= len(r) || unreadable(r[i]) {
				return ""
			}
			vs = append(vs, r[i])
		}
		return uniform(vs)
	}
	var f facts
	name := col(0)
	if len(rows) > 1 && name == rows[0][0] {
		name = fmt.Sprintf("%d x %s", len(rows), name)
	}
	f.put(GPUName, name)
	f.put(GPUCount, len(rows))
	f.put(GPUDriver, col(1))
	f.put(GPUMemory, col(2))
	if len(rows[0]) < 14 {
		return f
	}
	for i, k := range []string{GPUUUID, GPUPowerLimit, GPUPowerDefault, GPUAppClock, GPUMaxClock,
		GPUPersistence, GPUMIG, GPUECC, GPUComputeMode} {
		if v := col(3 + i); v != "" {
			f.put(k, v)
		}
	}
	if g, w := col(12), col(13); g != "" && w != "" {
		f.put(GPUPCIe, "gen"+g+" x"+w)
	}
	return f
}

// unreadable is nvidia-smi's answer for a field the GPU or driver does not report.
func unreadable(v string) bool {
	return v == "" || strings.HasPrefix(v, "[") || v == "N/A"
}

// cudaRe finds the CUDA version in nvidia-smi -q's header ("CUDA Version : 13.0").
var cudaRe = regexp.MustCompile(`(?m)^CUDA Version\s*:\s*(\S+)`)

// CUDAFromSMI reads the CUDA version the driver supports from nvidia-smi -q output.
func CUDAFromSMI(out string) []record.Condition {
	m := cudaRe.FindStringSubmatch(out)
	if m == nil || unreadable(m[1]) {
		return nil
	}
	var f facts
	f.put(GPUCUDA, m[1])
	return f
}

// GPUQueryDisplay is the -q -d list capture asks for: the header carries the CUDA version,
// PERFORMANCE the clock event reasons that say whether clocks are locked.
const GPUQueryDisplay = "COMPUTE,PERFORMANCE"

// appClocksRe finds each GPU's "Applications Clocks Setting" reason in nvidia-smi -q -d
// PERFORMANCE, under "Clocks Event Reasons" (driver 535 on) or "Clocks Throttle Reasons".
var appClocksRe = regexp.MustCompile(`(?m)^\s+Applications Clocks Setting\s*:\s*(.+?)\s*$`)

// LockFromSMI reads whether clocks are held by a user setting (GPUClocksLocked) from nvidia-smi
// -q -d PERFORMANCE: "yes" where the Applications Clocks Setting reason is Active, "no" where
// it is Not Active, per GPU (mixed GPUs listed in full). Nothing when no GPU says.
func LockFromSMI(out string) []record.Condition {
	var vs []string
	for _, m := range appClocksRe.FindAllStringSubmatch(out, -1) {
		switch m[1] {
		case "Active":
			vs = append(vs, "yes")
		case "Not Active":
			vs = append(vs, "no")
		default:
			return nil
		}
	}
	if len(vs) == 0 {
		return nil
	}
	var f facts
	f.put(GPUClocksLocked, uniform(vs))
	return f
}

// NVLinkStatusArgs is the nvidia-smi call NVLinkFromSMI reads.
var NVLinkStatusArgs = []string{"nvlink", "-s"}

var (
	nvlGPURe  = regexp.MustCompile(`^GPU \d+:`)
	nvlLinkRe = regexp.MustCompile(`^\s*Link \d+:\s*(.+?)\s*$`)
)

// NVLinkFromSMI reads nvidia-smi nvlink -s: per GPU, a line "GPU 0: NAME (UUID: …)" and one
// "Link N: 26.562 GB/s" per link ("<inactive>" for a link that is down). GPUNVLink is the
// number of links up ("18 links") or "none", GPUNVLinkSpeed their speed when all agree;
// several GPUs with one value are written once. Nothing when no GPU line reads.
func NVLinkFromSMI(out string) []record.Condition {
	type gpu struct {
		up     int
		speeds []string
	}
	var gpus []*gpu
	for _, line := range strings.Split(out, "\n") {
		if nvlGPURe.MatchString(line) {
			gpus = append(gpus, &gpu{})
			continue
		}
		m := nvlLinkRe.FindStringSubmatch(line)
		if m == nil || len(gpus) == 0 || strings.Contains(m[1], "inactive") || unreadable(m[1]) {
			continue
		}
		g := gpus[len(gpus)-1]
		g.up++
		if !slices.Contains(g.speeds, m[1]) {
			g.speeds = append(g.speeds, m[1])
		}
	}
	if len(gpus) == 0 {
		return nil
	}
	var links, speeds []string
	for _, g := range gpus {
		switch g.up {
		case 0:
			links = append(links, "none")
		case 1:
			links = append(links, "1 link")
		default:
			links = append(links, strconv.Itoa(g.up)+" links")
		}
		if g.up > 0 {
			speeds = append(speeds, strings.Join(g.speeds, "/"))
		}
	}
	var f facts
	f.put(GPUNVLink, uniform(links))
	if len(speeds) == len(gpus) {
		f.put(GPUNVLinkSpeed, uniform(speeds))
	}
	return f
}

// migRe finds a MIG device in nvidia-smi -L ("  MIG 3g.40gb     Device  0: (UUID: MIG-…)").
var migRe = regexp.MustCompile(`(?m)^\s+MIG\s+(\S+)\s+Device`)

// MIGFromSMI reads the MIG instances' profiles from nvidia-smi -L, sorted, e.g.
// "1g.10gb,3g.40gb"; nothing when no GPU is partitioned.
func MIGFromSMI(out string) []record.Condition {
	var profiles []string
	for _, m := range migRe.FindAllStringSubmatch(out, -1) {
		profiles = append(profiles, m[1])
	}
	if len(profiles) == 0 {
		return nil
	}
	slices.Sort(profiles)
	var f facts
	f.put(GPUMIGProfile, strings.Join(profiles, ","))
	return f
}

// ComputeApp is one line of nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory
// --format=csv,noheader,nounits: a process holding memory on a GPU.
type ComputeApp struct {
	PID     int
	GPU     string // the GPU's UUID
	UsedMiB float64
}

// ComputeAppsQuery is the --query-compute-apps field list ParseComputeApps reads.
const ComputeAppsQuery = "pid,gpu_uuid,used_memory"

// ParseComputeApps reads nvidia-smi's answer to ComputeAppsQuery; lines that do not read
// (a banner, "[N/A]" memory under MIG) keep what they can.
func ParseComputeApps(out string) []ComputeApp {
	var apps []ComputeApp
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 2 {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(f[0]))
		if err != nil || pid <= 0 {
			continue
		}
		a := ComputeApp{PID: pid, GPU: strings.TrimSpace(f[1])}
		if len(f) > 2 {
			a.UsedMiB, _ = strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f[2]), "MiB")), 64)
		}
		apps = append(apps, a)
	}
	return apps
}

// idleMemMiB is the memory a GPU may show used with no process on it (the driver's own
// reservations): more, with no process listed, means processes nvidia-smi cannot show (in
// another PID namespace, a container), so no placement can be told.
const idleMemMiB = 256

// PlacementOf tells where a server runs from its processes (the listening process and its
// descendants, whose pids are given), nvidia-smi's compute processes, and the memory each GPU
// shows used (MiB): the sorted UUIDs of the GPUs the server's processes hold memory on; "cpu"
// when they hold none while nvidia-smi can see processes (some are listed, or no GPU holds
// more than idleMemMiB); "" when that cannot be told.
func PlacementOf(pids []int, apps []ComputeApp, usedMiB []float64) string {
	var uuids []string
	for _, a := range apps {
		if slices.Contains(pids, a.PID) && a.GPU != "" && !slices.Contains(uuids, a.GPU) {
			uuids = append(uuids, a.GPU)
		}
	}
	if len(uuids) > 0 {
		slices.Sort(uuids)
		return strings.Join(uuids, ",")
	}
	if len(pids) == 0 {
		return ""
	}
	if len(apps) > 0 {
		return PlacementCPU
	}
	for _, m := range usedMiB {
		if m > idleMemMiB {
			return ""
		}
	}
	return PlacementCPU
}

// uniform writes identical values once and mixed ones in full, so that a machine with mixed
// GPUs is never described as uniform.
func uniform(vs []string) string {
	for _, v := range vs[1:] {
		if v != vs[0] {
			return strings.Join(vs, "; ")
		}
	}
	return vs[0]
}
