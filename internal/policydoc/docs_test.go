package policydoc

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, from this package's folder.
var root = filepath.Join("..", "..")

// compareMethodHeading opens the compare method in docs/metrics.md.
const compareMethodHeading = "## Comparing runs: intervals, verdicts and how often they are wrong"

// compareMethodWords is the most words that section may hold: what a serving
// engineer reads to trust a verdict. Measured figures belong in docs/compare-evidence.md.
const compareMethodWords = 1600

// TestCompareMethodShort fails when docs/metrics.md's compare method grows past
// compareMethodWords words (its heading to the next section of the same level).
func TestCompareMethodShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := section(string(b), compareMethodHeading)
	if !ok {
		t.Fatalf("docs/metrics.md has no line %q", compareMethodHeading)
	}
	if n := len(strings.Fields(sec)); n > compareMethodWords {
		t.Errorf("docs/metrics.md %q holds %d words, more than %d: move measured figures to docs/compare-evidence.md",
			compareMethodHeading, n, compareMethodWords)
	}
}

// section is the text of md from the heading line to the next heading of the same or a
// higher level (outside code fences), and whether the heading is there.
func section(md, heading string) (string, bool) {
	lines := strings.Split(md, "\n")
	level := strings.Index(heading, " ")
	start := -1
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence {
			continue
		}
		if start < 0 {
			if l == heading {
				start = i
			}
			continue
		}
		if n := headingLevel(l); n > 0 && n <= level {
			return strings.Join(lines[start:i], "\n"), true
		}
	}
	if start < 0 {
		return "", false
	}
	return strings.Join(lines[start:], "\n"), true
}

// headingLevel is the level of an ATX heading line (1 for "# x"), 0 for another line.
func headingLevel(l string) int {
	n := 0
	for n < len(l) && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(l) || l[n] != ' ' {
		return 0
	}
	return n
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	headLink   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors are the heading slugs of a markdown page, as GitHub makes them: the heading's text
// (code and link text kept, their marks dropped) lower-cased, every character but a letter, a
// digit, '-', '_' or a space dropped, spaces made '-'; a repeated slug gets -1, -2, ….
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		n := headingLevel(l)
		if fence || n == 0 {
			continue
		}
		text := headLink.ReplaceAllString(strings.TrimSpace(l[n:]), "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if k := seen[slug]; k > 0 {
			out[slug+"-"+strconv.Itoa(k)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestDocLinksResolve fails on a relative markdown link, in README.md or docs/*.md, to a
// markdown page that does not exist, or to a heading (#anchor) the page does not have.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	cache := map[string]map[string]bool{}
	slugs := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(b))
		return cache[path], nil
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					if !strings.HasSuffix(file, ".md") {
						continue // a folder or another file: not a page with headings
					}
					path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				}
				links++
				where := filepath.Base(page) + ":" + strconv.Itoa(i+1)
				if page == filepath.Join(root, "README.md") {
					where = "README.md:" + strconv.Itoa(i+1)
				} else {
					where = "docs/" + where
				}
				a, err := slugs(path)
				if err != nil {
					t.Errorf("%s: link %s: no such page", where, target)
					continue
				}
				if anchor != "" && !a[anchor] {
					t.Errorf("%s: link %s: %s has no heading with that anchor", where, target, file)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no relative links found: the pattern is broken")
	}
}
