package policydoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/compare"
	"servebench/metrics"
)

// TestDocCurrent fails when docs/compare-policy.md is not what the policy generates today: a
// rule, its order or a constant changed without the page being regenerated.
func TestDocCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Markdown(compare.DefaultPolicy) {
		t.Errorf("%s is stale, run `go run ./internal/policydoc/gendoc` from the repository root", Path)
	}
}

// TestMarkdownLists checks that the page holds every rule, in order, and every constant with
// its value, so a policy change shows in it.
func TestMarkdownLists(t *testing.T) {
	p := compare.DefaultPolicy
	md := Markdown(p)
	at := 0
	for _, r := range p.Rules {
		i := strings.Index(md[at:], "| `"+r.ID+"` |")
		if i < 0 {
			t.Fatalf("rule %s missing or out of order", r.ID)
		}
		at += i
	}
	p.Rules = append([]compare.Rule(nil), p.Rules...)
	p.Rules[0].Constants = []compare.Constant{{Name: "made_up", Value: 0.125, Unit: "share"}}
	if md2 := Markdown(p); !strings.Contains(md2, "| `made_up` | 0.125 | share |") || md2 == md {
		t.Error("a changed constant does not show in the page")
	}
}

// TestSteadyDocCurrent fails when docs/steady-policy.md is not what metrics.SteadyPolicy
// generates today.
func TestSteadyDocCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", SteadyPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != SteadyMarkdown(metrics.SteadyPolicy) {
		t.Errorf("%s is stale, run `go run ./internal/policydoc/gendoc` from the repository root", SteadyPath)
	}
	md := SteadyMarkdown(metrics.SteadyPolicy)
	at := 0
	for _, r := range metrics.SteadyPolicy.Rules {
		i := strings.Index(md[at:], "| `"+r.ID+"` |")
		if i < 0 {
			t.Fatalf("rule %s missing or out of order", r.ID)
		}
		at += i
	}
}
