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
	"testing"
)

// binary is a servebench built from this checkout by TestMain, as the image and the Job run it.
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
	// The image's build flags: a static binary with a version stamped in it.
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X servebench/internal/cli.Version="+testVersion,
		"-o", binary, "servebench/cmd/servebench")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
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
