package capture

import (
	"context"
	"os/exec"
	"time"

	"servebench/conditions"
	"servebench/record"
)

// nvidiaSMI runs nvidia-smi's CSV query; a variable so tests can give recorded output.
var nvidiaSMI = func(ctx context.Context) ([]byte, error) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "nvidia-smi", "--query-gpu="+conditions.SMIQuery,
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
	return conditions.GPUFromSMI(string(out))
}
