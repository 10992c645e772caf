package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestMultiRunDocuments: the run table of a --repeat file, a sweep's points and findings, and
// a comparison are each one document, and every line, verdict, table cell and note of it is in
// the text and the Markdown written from it; the JSON of a sweep and of a comparison holds the
// keys its document carries.
func TestMultiRunDocuments(t *testing.T) {
	render := func(name string, ins ...Input) string {
		t.Helper()
		var b bytes.Buffer
		if err := Render(&b, name, ins...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b.String()
	}
	repeat := fileInput(t, "repeat.jsonl")
	runs, ds, err := repeatedRuns(repeat)
	if err != nil || len(runs) != 3 || len(ds) == 0 {
		t.Fatalf("repeat.jsonl: %d runs, %d figures over them, %v", len(runs), len(ds), err)
	}
	sweep := sweepFile(t, 2)
	sweepRuns, err := sweep.summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	base, cand := fileInput(t, "base.jsonl"), fileInput(t, "cand.jsonl")
	bs, cs, res, err := comparison([]Input{base, cand}, "md")
	if err != nil {
		t.Fatal(err)
	}
	var compareText, compareJSON bytes.Buffer
	if err := CompareText(&compareText, res, bs.label, cs.label); err != nil {
		t.Fatal(err)
	}
	if err := CompareJSON(&compareJSON, res, bs.label, cs.label); err != nil {
		t.Fatal(err)
	}
	plain := compareDocument(res, cmpDocSides{baseName: bs.label, candName: cs.label})
	paged := compareDocument(res, cmpDocSides{baseName: bs.label, candName: cs.label, base: bs, cand: cs})
	for _, c := range []struct {
		name           string
		textDoc, mdDoc *Document // the comparison's text knows no side's runs: they need the records
		text, md, json string
		sections       int // at least
	}{
		{"repeat", multiDocument(repeat.Header, runs, ds), nil, render("text", fileInput(t, "repeat.jsonl")), render("md", fileInput(t, "repeat.jsonl")), "", 2},
		{"sweep", multiDocument(sweep.Header, sweepRuns, nil), nil, render("text", sweepFile(t, 2)), render("md", sweepFile(t, 2)), render("json", sweepFile(t, 2)), 2},
		{"compare", plain, paged, compareText.String(), render("md", fileInput(t, "base.jsonl"), fileInput(t, "cand.jsonl")), compareJSON.String(), 5},
	} {
		if c.mdDoc == nil {
			c.mdDoc = c.textDoc
		}
		if len(c.textDoc.Sections) < c.sections || len(c.mdDoc.Sections) < c.sections {
			t.Errorf("%s: %d and %d sections, want at least %d", c.name, len(c.textDoc.Sections), len(c.mdDoc.Sections), c.sections)
		}
		for _, sec := range c.textDoc.Sections {
			for _, s := range sectionTexts(sec) {
				if !strings.Contains(c.text, s) {
					t.Errorf("%s: section %s: %q is not in the text", c.name, sec.Name, s)
				}
			}
		}
		for _, sec := range c.mdDoc.Sections {
			for _, s := range sectionTexts(sec) {
				if !strings.Contains(c.md, mdEsc(s)) {
					t.Errorf("%s: section %s: %q is not in the Markdown", c.name, sec.Name, s)
				}
			}
		}
		if c.json == "" {
			continue
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.json), &keys); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := 0
		for _, sec := range c.textDoc.Sections {
			for _, f := range sec.JSON {
				n++
				if _, ok := keys[f.Key]; !ok {
					t.Errorf("%s: key %s of section %s is not in the JSON", c.name, f.Key, sec.Name)
				}
			}
		}
		if n < 4 {
			t.Errorf("%s: the document carries %d JSON keys", c.name, n)
		}
	}
}

// sectionTexts are the words of a section that a person reads: its verdicts', lines' and
// notes' texts and its tables' cells and notes.
func sectionTexts(sec *Section) []string {
	var out []string
	for _, v := range sec.Verdicts {
		out = append(out, v.Text)
	}
	for _, l := range sec.Lines {
		out = append(out, l.Text)
	}
	for _, tb := range sec.Tables {
		for _, r := range tb.Rows {
			out = append(out, r...)
		}
		out = append(out, tb.Note)
	}
	out = append(out, sec.Notes...)
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}
