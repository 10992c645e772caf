package conditions

import (
	"fmt"
	"strings"

	"servebench/record"
)

// SMIQuery is the --query-gpu field list whose CSV output (--format=csv,noheader) GPUFromSMI
// reads; capture runs nvidia-smi with it, so the columns and their parser cannot drift apart.
const SMIQuery = "name,driver_version,memory.total"

// GPUFromSMI reads nvidia-smi's answer to SMIQuery, lines such as
// "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB": name (with a count when there are several, as
// "2 x NVIDIA H100 80GB HBM3"), count, driver and memory. Nothing when no line reads.
func GPUFromSMI(out string) []record.Condition {
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
