package exitcode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tableCodes returns the codes in the first column of the Markdown table that follows the
// heading in path ("" for the file's first table).
func tableCodes(t *testing.T, path, heading string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if heading != "" {
		i := strings.Index(text, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("%s: no heading %q", path, heading)
		}
		text = text[i+len(heading)+2:]
	}
	row := regexp.MustCompile(`^\| *([0-9]+) *\|`)
	var codes []int
	inTable := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		if m := row.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			codes = append(codes, n)
		}
	}
	return codes
}

// Every code defined here has a row in docs/exit-codes.md and README.md's table, and each
// table has a row for no other code, so the three cannot drift apart.
func TestCodesDocumented(t *testing.T) {
	if !slices.IsSorted(All) {
		t.Errorf("All is not in increasing order: %v", All)
	}
	for _, doc := range []struct{ path, heading string }{
		{"../docs/exit-codes.md", ""},
		{"../README.md", "## Exit codes"},
	} {
		got := tableCodes(t, doc.path, doc.heading)
		if !slices.Equal(got, All) {
			t.Errorf("%s: exit codes %v in its table, want %v (exitcode.All)", doc.path, got, All)
		}
	}
}

// All holds every constant this package declares, so a new code cannot miss the tables.
func TestAllComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "exitcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []int
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				n, err := strconv.Atoi(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				declared = append(declared, n)
			}
		}
	}
	slices.Sort(declared)
	if !slices.Equal(declared, All) {
		t.Errorf("constants %v, All %v", declared, All)
	}
}
