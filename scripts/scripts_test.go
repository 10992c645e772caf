// Package scripts holds the repository's shell scripts; its tests check their command lines.
package scripts

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestGPUCheckHelp: --help prints the usage on stdout and exits 0; an unknown command prints
// it on stderr and exits 2, as every servebench usage error does (docs/exit-codes.md).
func TestGPUCheckHelp(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, arg := range []string{"--help", "-h", "help"} {
		out, err := exec.Command("bash", "gpu-check", arg).Output()
		if err != nil {
			t.Fatalf("gpu-check %s: %v", arg, err)
		}
		if !strings.Contains(string(out), "gpu-check prepare DIR") {
			t.Errorf("gpu-check %s printed no usage on stdout: %q", arg, out)
		}
	}
	cmd := exec.Command("bash", "gpu-check", "bogus")
	var ee *exec.ExitError
	if out, err := cmd.Output(); !errors.As(err, &ee) || ee.ExitCode() != 2 || len(out) != 0 {
		t.Errorf("gpu-check bogus: err %v, stdout %q; want exit 2 and the usage on stderr", err, out)
	}
}
