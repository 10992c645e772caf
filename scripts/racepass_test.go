package scripts

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRacePassesPartition holds scripts/test's second pass (without the race detector) to
// the tests that skip themselves under it: in each package it names, the tests its -run
// pattern selects are exactly those that skip under -race, so none runs twice; and every test
// that skips under -race, anywhere in the module, is run without it, by scripts/test or by
// .ci/run's pass of the tests whose checks are tighter without it, so none runs in neither.
func TestRacePassesPartition(t *testing.T) {
	pkgs, pattern := nonRacePass(t, "test", `(?m)^nonrace_pkgs='([^']*)'$`, `(?m)^nonrace_tests='([^']*)'$`)
	ciPkgs, ciPattern := nonRacePass(t, "../.ci/run", `(?m)^go test -count=1 -run '[^']*' (.*)$`, `(?m)^go test -count=1 -run '([^']*)' `)
	run, ciRun := regexp.MustCompile(pattern), regexp.MustCompile(ciPattern)
	tests, skipping := raceSkips(t, "..")
	for _, dir := range pkgs {
		for _, name := range tests[dir] {
			if run.MatchString(name) && !slices.Contains(skipping[dir], name) {
				t.Errorf("%s: %s runs under -race and again in scripts/test's pass without it", dir, name)
			}
		}
		if len(skipping[dir]) == 0 {
			t.Errorf("%s: in scripts/test's pass without -race, but none of its tests skips under -race", dir)
		}
	}
	for dir, names := range skipping {
		for _, name := range names {
			if !(slices.Contains(pkgs, dir) && run.MatchString(name)) && !(slices.Contains(ciPkgs, dir) && ciRun.MatchString(name)) {
				t.Errorf("%s: %s skips under -race and no pass without it runs it (scripts/test's nonrace_pkgs and nonrace_tests)", dir, name)
			}
		}
	}
}

// nonRacePass reads a script's package list and -run pattern, the packages as directories
// relative to the module root ("compare").
func nonRacePass(t *testing.T, script, pkgsRE, testsRE string) ([]string, string) {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	p, r := regexp.MustCompile(pkgsRE).FindSubmatch(b), regexp.MustCompile(testsRE).FindSubmatch(b)
	if p == nil || r == nil {
		t.Fatalf("%s: no pass without -race found (%q, %q)", script, pkgsRE, testsRE)
	}
	var dirs []string
	for _, f := range strings.Fields(string(p[1])) {
		dirs = append(dirs, strings.TrimPrefix(f, "./"))
	}
	return dirs, string(r[1])
}

// raceSkips lists, by directory relative to root, every top-level test function and those
// that skip under the race detector: a statement of their body `if … raceEnabled … { … t.Skip…
// }` (or raceDetector, the name in external test packages).
func raceSkips(t *testing.T, root string) (tests, skipping map[string][]string) {
	t.Helper()
	tests, skipping = map[string][]string{}, map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "shared") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			tests[dir] = append(tests[dir], fn.Name.Name)
			if skipsUnderRace(fn.Body) {
				skipping[dir] = append(skipping[dir], fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tests, skipping
}

func skipsUnderRace(body *ast.BlockStmt) bool {
	for _, s := range body.List {
		is, ok := s.(*ast.IfStmt)
		if !ok || !mentions(is.Cond, "raceEnabled", "raceDetector") {
			continue
		}
		skips := false
		ast.Inspect(is.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow") {
					skips = true
				}
			}
			return !skips
		})
		if skips {
			return true
		}
	}
	return false
}

func mentions(e ast.Expr, names ...string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(names, id.Name) {
			found = true
		}
		return !found
	})
	return found
}
