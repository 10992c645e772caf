package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"servebench/selftest"
)

// TestCompletion: enumerated flags complete with their values, through cobra's __complete
// (what every shell's script calls) and through the bash script itself.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--api", ""}, []string{"openai-completions", "llamacpp", "auto"}},
		{[]string{"run", "--arrival", ""}, []string{"poisson", "gamma"}},
		{[]string{"report", "x.jsonl", "--format", ""}, []string{"html", "gobench", "csv"}},
		{[]string{"compare", "a", "b", "--format", ""}, []string{"text", "json"}},
		{[]string{"sim", "--hardware", ""}, []string{"h100", "l4"}},
		{[]string{"sweep", "--cache-salt", ""}, []string{"per-run"}},
	} {
		_, out, errs := runMain(t, append([]string{"__complete"}, c.args...)...)
		for _, w := range c.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("complete %v: %q lacks %s (%s)", c.args, out, w, errs)
			}
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	// servebench on the PATH is this test binary, which TestMain runs as the command when
	// selftest.ChildEnv is set (no second build of the binary)
	dir := t.TempDir()
	exe := filepath.Join(dir, "servebench")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, exe); err != nil {
		t.Skipf("no symbolic link here: %v", err)
	}
	// the generated script, sourced by bash, completes --api's values
	// (bash-completion's _get_comp_words_by_ref, which the script uses, shimmed for a bare bash)
	script := `_get_comp_words_by_ref() { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
source <("$SB" completion bash)
COMP_WORDS=(servebench run --api open); COMP_CWORD=3; COMP_LINE="servebench run --api open"; COMP_POINT=${#COMP_LINE}
__start_servebench servebench open run
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "SB="+exe, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), selftest.ChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "openai-completions") || !strings.Contains(string(out), "openai-chat") {
		t.Errorf("bash completion of --api open: %v: %q", err, out)
	}
}
