package conditions

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"servebench/record"
)

// nvidiaSMI runs nvidia-smi's CSV query; a variable so tests can give recorded output.
var nvidiaSMI = func(ctx context.Context) ([]byte, error) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=name,driver_version,memory.total",
		"--format=csv,noheader").Output()
}

// GPU returns this machine's GPUs as nvidia-smi sees them: name (with a count when there are
// several, as "2 x NVIDIA H100 80GB HBM3"), driver and memory. Nothing when nvidia-smi is
// absent or fails: the caller then says unknown, or the user declares them.
func GPU(ctx context.Context) []record.Condition {
	out, err := nvidiaSMI(ctx)
	if err != nil {
		return nil
	}
	return parseSMI(string(out))
}

// parseSMI reads lines "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB".
func parseSMI(out string) []record.Condition {
	var names, drivers, mems []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		parts := strings.Split(line, ",")
		if len(parts) < 3 {
			continue
		}
		names = append(names, strings.TrimSpace(parts[0]))
		drivers = append(drivers, strings.TrimSpace(parts[1]))
		mems = append(mems, strings.TrimSpace(parts[2]))
	}
	if len(names) == 0 {
		return nil
	}
	var f facts
	name := uniform(names)
	if len(names) > 1 && name == names[0] {
		name = fmt.Sprintf("%d x %s", len(names), name)
	}
	f.put(GPUName, name)
	f.put(GPUCount, len(names))
	f.put(GPUDriver, uniform(drivers))
	f.put(GPUMemory, uniform(mems))
	return f
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
