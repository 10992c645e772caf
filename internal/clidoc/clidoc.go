// Package clidoc writes servebench's flag reference, one Markdown page per command, from the
// cobra commands themselves, so the reference in docs/cli cannot drift from `--help`.
package clidoc

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"servebench/internal/cli"
)

// Dir is the reference's folder, relative to the repository root.
const Dir = "docs/cli"

// Generate writes one Markdown page per command of servebench into dir (created if needed)
// and removes pages of commands that no longer exist, so dir holds exactly the reference.
func Generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	root := cli.Command()
	// The generation date would make every regeneration a change; the pages are compared
	// byte for byte by the staleness test.
	disableAutoGenTag(root)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("generate %s: %w", dir, err)
	}
	return nil
}

// disableAutoGenTag turns off cobra's "Auto generated on DATE" footer for cmd and every
// command below it (GenMarkdownTree reads the flag of each command it writes).
func disableAutoGenTag(cmd *cobra.Command) {
	cmd.DisableAutoGenTag = true
	for _, c := range cmd.Commands() {
		disableAutoGenTag(c)
	}
}

// Pages returns the Markdown pages in dir by file name.
func Pages(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	pages := make(map[string]string, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		pages[filepath.Base(f)] = string(b)
	}
	return pages, nil
}

// Stale compares the pages in dir with freshly generated ones and returns the names of the
// pages that differ, are missing or should not be there, in sorted order.
func Stale(dir string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "servebench-clidoc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := Generate(tmp); err != nil {
		return nil, err
	}
	want, err := Pages(tmp)
	if err != nil {
		return nil, err
	}
	have, err := Pages(dir)
	if err != nil {
		return nil, err
	}
	var stale []string
	for name, w := range want {
		if h, ok := have[name]; !ok {
			stale = append(stale, name+" (missing)")
		} else if h != w {
			stale = append(stale, name+" (differs)")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no such command)")
		}
	}
	sort.Strings(stale)
	return stale, nil
}
