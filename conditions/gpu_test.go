package conditions

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"servebench/record"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/nvidia-smi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGPUFromSMIRich: every setting of the rich query is a condition, with nvidia-smi's units.
func TestGPUFromSMIRich(t *testing.T) {
	s := Merge(GPUFromSMI(readTestdata(t, "rich.txt")))
	for k, v := range map[string]string{
		GPUName: "NVIDIA H200", GPUCount: "1", GPUDriver: "580.159.04", GPUMemory: "143771 MiB",
		GPUUUID: "GPU-5d1c8a3e-7f2b-4c1d-9e0a-1b2c3d4e5f60", GPUPowerLimit: "700.00 W", GPUPowerDefault: "700.00 W",
		GPUAppClock: "1980 MHz", GPUMaxClock: "1980 MHz", GPUPersistence: "Enabled", GPUMIG: "Disabled",
		GPUECC: "Enabled", GPUComputeMode: "Default", GPUPCIe: "gen5 x16",
	} {
		if got := s.Value(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// TestGPUFromSMIUnreadable: a field the GPU cannot report is left out, not recorded as
// "[N/A]"; two GPUs with different power limits are listed in full.
func TestGPUFromSMIUnreadable(t *testing.T) {
	out := "NVIDIA L4, 550.1, 23034 MiB, GPU-a, 72.00 W, 72.00 W, [N/A], 2040 MHz, Enabled, [N/A], Enabled, Default, 4, 16\n" +
		"NVIDIA L4, 550.1, 23034 MiB, GPU-b, 60.00 W, 72.00 W, [N/A], 2040 MHz, Enabled, [N/A], Enabled, Default, 4, 16\n"
	s := Merge(GPUFromSMI(out))
	if _, ok := s.Get(GPUAppClock); ok {
		t.Errorf("unreadable application clock recorded: %q", s.Value(GPUAppClock))
	}
	if _, ok := s.Get(GPUMIG); ok {
		t.Errorf("unreadable MIG mode recorded")
	}
	if got := s.Value(GPUPowerLimit); got != "72.00 W; 60.00 W" {
		t.Errorf("power limit = %q", got)
	}
	if got := s.Value(GPUUUID); got != "GPU-a; GPU-b" {
		t.Errorf("uuid = %q", got)
	}
}

func TestCUDAAndMIGFromSMI(t *testing.T) {
	if got := Merge(CUDAFromSMI(readTestdata(t, "q-compute.txt"))).Value(GPUCUDA); got != "13.0" {
		t.Errorf("cuda = %q", got)
	}
	if got := Merge(MIGFromSMI(readTestdata(t, "list-mig.txt"))).Value(GPUMIGProfile); got != "1g.10gb,3g.40gb" {
		t.Errorf("mig profile = %q", got)
	}
	if MIGFromSMI("GPU 0: NVIDIA H200 (UUID: GPU-x)\n") != nil {
		t.Error("a GPU without MIG gave a profile")
	}
}

// TestPlacementOf: the server's GPUs when its processes hold memory there; cpu when they hold
// none and nvidia-smi can see processes; unknown when it cannot tell.
func TestPlacementOf(t *testing.T) {
	apps := ParseComputeApps("4242, GPU-b, 3972\n4243, GPU-a, 800\n999, GPU-c, 10\n")
	if len(apps) != 3 || apps[0].PID != 4242 || apps[0].GPU != "GPU-b" || apps[0].UsedMiB != 3972 {
		t.Fatalf("apps %+v", apps)
	}
	for _, tc := range []struct {
		name string
		pids []int
		apps []ComputeApp
		used []float64
		want string
	}{
		{"server and its worker on two GPUs", []int{4242, 4243}, apps, nil, "GPU-a,GPU-b"},
		{"other processes listed, not the server", []int{7}, apps, nil, PlacementCPU},
		{"nothing listed, GPUs idle", []int{7}, nil, []float64{1, 0}, PlacementCPU},
		{"nothing listed, memory held by processes nvidia-smi cannot show", []int{7}, nil, []float64{3975}, ""},
		{"server process not found", nil, apps, nil, ""},
	} {
		if got := PlacementOf(tc.pids, tc.apps, tc.used); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestGPUFromDCGM: a remote server's GPUs from dcgm-exporter's labels and setting families,
// written as nvidia-smi writes them; DCGM's blank sentinel is no value.
func TestGPUFromDCGM(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	lab := func(g, uuid string) map[string]string {
		return map[string]string{"gpu": g, "UUID": uuid, "device": "nvidia" + g, "modelName": "NVIDIA H100 80GB HBM3",
			"Hostname": "node-a", "DCGM_FI_DRIVER_VERSION": "550.54.15"}
	}
	var series []record.Series
	for _, g := range []struct{ idx, uuid string }{{"0", "GPU-aa"}, {"1", "GPU-bb"}} {
		for name, val := range map[string]float64{"DCGM_FI_DEV_POWER_USAGE": 312.5, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT": 700,
			"DCGM_FI_DEV_PCIE_LINK_GEN": 5, "DCGM_FI_DEV_PCIE_LINK_WIDTH": 16, "DCGM_FI_DEV_PERSISTENCE_MODE": 1,
			"DCGM_FI_CUDA_DRIVER_VERSION": 12040, "DCGM_FI_DEV_APP_SM_CLOCK": 9223372036854775794} {
			series = append(series, record.Series{Name: name, Labels: lab(g.idx, g.uuid), Type: "gauge", Value: v(val)})
		}
	}
	s := Merge(GPUFromDCGM(series))
	for k, want := range map[string]string{GPUName: "2 x NVIDIA H100 80GB HBM3", GPUCount: "2", GPUUUID: "GPU-aa; GPU-bb",
		GPUDriver: "550.54.15", GPUPowerLimit: "700.00 W", GPUPCIe: "gen5 x16", GPUPersistence: "Enabled", GPUCUDA: "12.4"} {
		if got := s.Value(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := s.Get(GPUAppClock); ok {
		t.Errorf("DCGM's blank value recorded as a clock: %q", s.Value(GPUAppClock))
	}
	if GPUFromDCGM([]record.Series{{Name: "vllm:num_requests_running", Value: v(1)}}) != nil {
		t.Error("conditions from a scrape without DCGM families")
	}
}

// TestLockAndNVLinkFromSMI: the Applications Clocks Setting reason of -q -d PERFORMANCE is
// the lock, under either heading; nvlink -s gives the links up and their speed, inactive
// links left out, and a GPU without links is "none", not unknown.
func TestLockAndNVLinkFromSMI(t *testing.T) {
	q := readTestdata(t, "q-performance.txt")
	if got := Merge(LockFromSMI(q)).Value(GPUClocksLocked); got != "yes" {
		t.Errorf("locked = %q, want yes", got)
	}
	old := strings.ReplaceAll(strings.Replace(q, "Setting       : Active", "Setting       : Not Active", 1), "Clocks Event Reasons", "Clocks Throttle Reasons")
	if got := Merge(LockFromSMI(old)).Value(GPUClocksLocked); got != "no; yes" {
		t.Errorf("mixed locks under the old heading = %q, want \"no; yes\"", got)
	}
	if LockFromSMI(readTestdata(t, "q-compute.txt")) != nil {
		t.Error("a lock read from output without the reasons")
	}
	s := Merge(NVLinkFromSMI(readTestdata(t, "nvlink.txt")))
	if got := s.Value(GPUNVLink); got != "18 links" {
		t.Errorf("nvlink = %q, want 18 links", got)
	}
	if got := s.Value(GPUNVLinkSpeed); got != "26.562 GB/s" {
		t.Errorf("nvlink speed = %q", got)
	}
	down := "GPU 0: NVIDIA H100 (UUID: GPU-aa)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\nGPU 1: NVIDIA H100 (UUID: GPU-bb)\n\t Link 0: 26.562 GB/s\n"
	if got := Merge(NVLinkFromSMI(down)).Value(GPUNVLink); got != "1 link" {
		t.Errorf("inactive link counted: %q", got)
	}
	s = Merge(NVLinkFromSMI("GPU 0: NVIDIA L4 (UUID: GPU-x)\n"))
	if got := s.Value(GPUNVLink); got != "none" {
		t.Errorf("GPU without NVLink = %q, want none", got)
	}
	if _, ok := s.Get(GPUNVLinkSpeed); ok {
		t.Error("a speed for no link")
	}
	if NVLinkFromSMI("NVIDIA-SMI has failed\n") != nil {
		t.Error("links read from an error")
	}
}

// TestLockAndNVLinkFromDCGM: the 0x2 bit of the clock event reasons is the lock; per-link
// bandwidth families with a value are the links, all blank is "none", the total alone is
// "present".
func TestLockAndNVLinkFromDCGM(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	lab := map[string]string{"gpu": "0", "UUID": "GPU-aa", "modelName": "NVIDIA H100 80GB HBM3"}
	series := func(reasons float64, up, blank int) []record.Series {
		ss := []record.Series{{Name: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", Labels: lab, Value: v(reasons)}}
		for i := 0; i < up+blank; i++ {
			val := 1234.0
			if i >= up {
				val = 9223372036854775794
			}
			ss = append(ss, record.Series{Name: fmt.Sprintf("DCGM_FI_DEV_NVLINK_BANDWIDTH_L%d", i), Labels: lab, Value: v(val)})
		}
		return ss
	}
	for _, tc := range []struct {
		name           string
		ss             []record.Series
		locked, nvlink string
	}{
		{"locked, 18 links", series(0x2|0x1, 18, 0), "yes", "18 links"},
		{"power cap only, links blank", series(0x4, 0, 18), "no", "none"},
		{"total only", append(series(0, 0, 0), record.Series{Name: "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", Labels: lab, Value: v(0)}), "no", "present"},
	} {
		s := Merge(GPUFromDCGM(tc.ss))
		if got := s.Value(GPUClocksLocked); got != tc.locked {
			t.Errorf("%s: locked = %q, want %q", tc.name, got, tc.locked)
		}
		if got := s.Value(GPUNVLink); got != tc.nvlink {
			t.Errorf("%s: nvlink = %q, want %q", tc.name, got, tc.nvlink)
		}
	}
}
