//go:build unix

package capture

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"servebench/conditions"
)

// fakeH200 makes nvidia-smi the fake H200 script (bench/testdata/nvidia-smi-h200), run as a
// process with env added to the environment.
func fakeH200(t *testing.T, env ...string) {
	t.Helper()
	src, err := filepath.Abs("../../bench/testdata/nvidia-smi-h200")
	if err != nil {
		t.Fatal(err)
	}
	old := nvidiaSMI
	nvidiaSMI = func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "sh", append([]string{src}, args...)...)
		cmd.Env = append(cmd.Environ(), env...)
		return cmd.Output()
	}
	t.Cleanup(func() { nvidiaSMI = old })
}

// TestGPULockAndNVLinkNotComparable: captured from the fake H200, a clock lock set between two
// runs and an NVLink that is gone each make the runs not comparable, naming the key, unless
// the change is expected; the same GPU captured twice compares as identical.
func TestGPULockAndNVLinkNotComparable(t *testing.T) {
	capture := func(env ...string) conditions.Set {
		fakeH200(t, env...)
		return conditions.Merge(GPU(context.Background()))
	}
	base := capture()
	for k, v := range map[string]string{conditions.GPUClocksLocked: "no", conditions.GPUNVLink: "18 links",
		conditions.GPUNVLinkSpeed: "26.562 GB/s", conditions.GPUCUDA: "13.0", conditions.GPUPowerLimit: "700.00 W"} {
		if got := base.Value(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if ds := conditions.Diff(base, capture(), nil); len(ds) != 0 {
		t.Errorf("the same GPU differs from itself: %+v", ds)
	}
	for _, tc := range []struct {
		env, key string
	}{
		{"FAKE_SMI_LOCKED=Active", conditions.GPUClocksLocked},
		{"FAKE_SMI_NVLINK=0", conditions.GPUNVLink},
	} {
		cand := capture(tc.env)
		var found bool
		for _, d := range conditions.Diff(base, cand, nil) {
			if d.Key == tc.key {
				found = true
				if d.Kind != conditions.KindBlocking {
					t.Errorf("%s: %s differs as %s, want blocking", tc.env, tc.key, d.Kind)
				}
			}
		}
		if !found {
			t.Errorf("%s: no difference in %s (%q vs %q)", tc.env, tc.key, base.Value(tc.key), cand.Value(tc.key))
		}
		for _, d := range conditions.Diff(base, cand, []string{tc.key}) {
			if d.Kind == conditions.KindBlocking {
				t.Errorf("%s: expected change still blocks: %s %q vs %q", tc.env, d.Key, d.Base.Value, d.Cand.Value)
			}
		}
	}
}
