package capture

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"servebench/conditions"
	"servebench/record"
)

// nvidiaSMI runs nvidia-smi with args and returns its output; a variable so tests can give
// recorded output. Each call is bounded: a hung driver must not hold the run.
var nvidiaSMI = func(ctx context.Context, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "nvidia-smi", args...).Output()
}

// GPU returns this machine's GPUs as nvidia-smi sees them: name (with a count when there are
// several, as "2 x NVIDIA H100 80GB HBM3"), driver and memory, and where the driver answers
// them the settings that change results (conditions.SMIRichQuery), the CUDA version, whether
// clocks are locked, the NVLink links and the MIG profiles. Nothing when nvidia-smi is absent or fails: the caller then says unknown, or
// the user declares them.
func GPU(ctx context.Context) []record.Condition {
	out, err := nvidiaSMI(ctx, "--query-gpu="+conditions.SMIRichQuery, "--format=csv,noheader")
	if err != nil {
		// an older driver refuses the whole query for one field it does not know
		if out, err = nvidiaSMI(ctx, "--query-gpu="+conditions.SMIQuery, "--format=csv,noheader"); err != nil {
			return nil
		}
	}
	cs := conditions.GPUFromSMI(string(out))
	if len(cs) == 0 {
		return nil
	}
	if q, err := nvidiaSMI(ctx, "-q", "-d", conditions.GPUQueryDisplay); err == nil {
		cs = append(cs, conditions.CUDAFromSMI(string(q))...)
		cs = append(cs, conditions.LockFromSMI(string(q))...)
	}
	if n, err := nvidiaSMI(ctx, conditions.NVLinkStatusArgs...); err == nil {
		cs = append(cs, conditions.NVLinkFromSMI(string(n))...)
	}
	if l, err := nvidiaSMI(ctx, "-L"); err == nil {
		cs = append(cs, conditions.MIGFromSMI(string(l))...)
	}
	return cs
}

// Placement says where the server at the loopback URL base runs (conditions.Placement), and
// which process it found listening (record.ObservedServerProcess). Nothing when nvidia-smi is
// absent. An unknown placement (the process not found, or nvidia-smi unable to show
// processes) is said as unknown: metrics then judges the GPUs by their utilisation.
func Placement(ctx context.Context, base string) conditions.Set {
	apps, err := nvidiaSMI(ctx, "--query-compute-apps="+conditions.ComputeAppsQuery, "--format=csv,noheader,nounits")
	if err != nil {
		return nil
	}
	var used []float64
	if m, err := nvidiaSMI(ctx, "--query-gpu=memory.used", "--format=csv,noheader,nounits"); err == nil {
		for _, l := range strings.Fields(string(m)) {
			if v, err := strconv.ParseFloat(l, 64); err == nil {
				used = append(used, v)
			}
		}
	}
	var s conditions.Set
	pid, name, tree := ServerProcess(base)
	s.Add(conditions.Placement, conditions.PlacementOf(tree, conditions.ParseComputeApps(string(apps)), used), conditions.Detected)
	if pid > 0 {
		s.Add(record.ObservedServerProcess, strconv.Itoa(pid)+" "+name, conditions.Detected)
	}
	return s
}
