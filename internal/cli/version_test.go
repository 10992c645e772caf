package cli

import (
	"strings"
	"testing"

	"servebench/exitcode"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	if code, out, _ := runMain(t, "version"); code != 0 || !strings.HasPrefix(out, "servebench "+Version) {
		t.Errorf("version: exit %d: %q", code, out)
	}
	if code, out, _ := runMain(t, "--version"); code != 0 || !strings.Contains(out, Version) {
		t.Errorf("--version: exit %d: %q", code, out)
	}
	if code, _, _ := runMain(t, "-v"); code != exitcode.Usage {
		t.Errorf("-v is not version (most tools read it as verbose): exit %d", code)
	}
}
