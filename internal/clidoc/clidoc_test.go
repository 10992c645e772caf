package clidoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsCurrent fails when docs/cli is not what the commands generate today: a flag, a
// default or a help text changed without the reference being regenerated.
func TestDocsCurrent(t *testing.T) {
	stale, err := Stale(filepath.Join("..", "..", Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("docs/cli is stale, run `go run ./internal/clidoc/gendoc` from the repository root:\n  %s",
			strings.Join(stale, "\n  "))
	}
}

// TestStaleDetects checks that the staleness check sees a changed, a missing and an extra page.
func TestStaleDetects(t *testing.T) {
	dir := t.TempDir()
	if err := Generate(dir); err != nil {
		t.Fatal(err)
	}
	if stale, err := Stale(dir); err != nil || len(stale) != 0 {
		t.Fatalf("fresh pages: stale %v, err %v", stale, err)
	}
	pages, err := Pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pages["servebench_run.md"]; !ok || len(pages) < 8 {
		t.Fatalf("generated pages: %d, servebench_run.md present %v", len(pages), ok)
	}
	run := filepath.Join(dir, "servebench_run.md")
	if err := os.WriteFile(run, []byte(pages["servebench_run.md"]+"\n--old-flag\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "servebench_sim.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "servebench_gone.md"), []byte("# gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, err := Stale(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"servebench_gone.md (no such command)", "servebench_run.md (differs)", "servebench_sim.md (missing)"}
	if strings.Join(stale, "|") != strings.Join(want, "|") {
		t.Errorf("stale = %q, want %q", stale, want)
	}
}
