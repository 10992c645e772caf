// Package deploy holds only tests: they check that what deploy/ ships (the Kubernetes
// manifests, the container recipe) is something Kubernetes and servebench accept, because
// neither a cluster nor a registry is at hand where the project is built and tested.
package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// binary is a servebench built from this checkout by TestMain, which the Job and report tests
// run. It is built as this test binary was (with the race detector or without, not
// -trimpath), so that its packages are the ones the test run compiled already and only the
// link is new: a static -trimpath build, as the image has it, compiled every package again
// in a configuration nothing else uses (20 s of the race pass after a change to stat, load
// average 7 to 14). TestImageBuilds builds the static binary it needs.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "servebench-deploy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "servebench")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	args := []string{"build", "-ldflags", "-s -w -X servebench/internal/cli.Version=" + testVersion,
		"-o", binary, "servebench/cmd/servebench"}
	if raceEnabled {
		args = slices.Insert(args, 1, "-race")
	}
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "go build ./cmd/servebench:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testVersion is the version stamped into the test binary, to find it again in the image.
const testVersion = "deploy-test"
