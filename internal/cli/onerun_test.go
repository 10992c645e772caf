package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/exitcode"
)

// TestRecordsNotOneRunRefused: a --repeat file (several runs, one header) reads as the runs it
// holds, while two files joined with cat, or a file with every record written twice, are
// refused by report and compare with exit 2 naming the file and line, never pooled into one
// run of twice the requests.
func TestRecordsNotOneRunRefused(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "8", "--output-tokens", "2",
		"--requests", "4", "--warmup", "1", "--concurrency", "2", "--repeat", "2", "-o", a); code != 0 {
		t.Fatal(errs)
	}
	if code, out, errs := runMain(t, "report", a, "--format", "json"); code != 0 || !strings.Contains(out, `"runs"`) {
		t.Fatalf("a --repeat 2 file: exit %d\n%s\n%s", code, errs, out)
	}
	body, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(body), "\n")
	var twice strings.Builder
	twice.WriteString(lines[0])
	for _, l := range lines[1:] {
		twice.WriteString(l + l)
	}
	files := map[string]string{
		"cat.jsonl":   string(body) + string(body),
		"twice.jsonl": twice.String(),
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"report", p}, {"report", p, "--format", "json"}, {"compare", a, p}} {
			code, out, errs := runMain(t, args...)
			if code != exitcode.Usage || !strings.Contains(errs, p+": line ") || strings.Count(errs, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s and a line", args, code, errs, p)
			}
			if strings.Contains(out, "completed") {
				t.Errorf("%v: a summary was printed:\n%s", args, out)
			}
		}
	}
}
