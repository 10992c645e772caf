package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// TestToyBreakdownAndSection: a new per-request key (one metrics.RegisterKey) and a new section
// (one RegisterSection) reach every format the document feeds, with no formatter written.
func TestToyBreakdownAndSection(t *testing.T) {
	metrics.RegisterKey(metrics.Key{ // the breakdown's one registration
		Name: "parity", Plural: "parities", Note: "per parity of the request id",
		Of: func(_ *record.Header, r *record.Record) (string, bool) {
			return map[bool]string{true: "even", false: "odd"}[r.ID%2 == 0], true
		},
	})
	defer metrics.UnregisterKey("parity")
	RegisterSection("toy", 50, func(_ *record.Header, s *metrics.Summary) *Section { // the section's one registration
		return &Section{Title: "Toy section",
			Lines:  []Line{{"toy", fmt.Sprintf("%d completed, counted by a toy", s.Completed)}},
			Tables: []*Table{{Head: []string{"what", "count"}, Rows: [][]string{{"toy-failed", fmt.Sprint(s.Failed)}}, Note: "a toy table"}},
			Notes:  []string{"toy note"}}
	})
	defer UnregisterSection("toy")

	in := fileInput(t, "base.jsonl")
	var recs []*record.Record
	for r, err := range in.Records {
		if err != nil {
			t.Fatal(err)
		}
		c := *r
		recs = append(recs, &c)
	}
	even := 0
	for _, r := range recs {
		if r.Measured() && r.ID%2 == 0 {
			even++
		}
	}
	input := func() Input {
		return Input{Label: "base", Header: in.Header, Records: func(yield func(*record.Record, error) bool) {
			for _, r := range recs {
				if !yield(r, nil) {
					return
				}
			}
		}}
	}
	for _, format := range []string{"text", "md", "html", "json"} {
		var b bytes.Buffer
		if err := Render(&b, format, input()); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"parities", "even", "odd", "toy-failed", "toy note", "completed, counted by a toy"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in the output", format, want)
			}
		}
		if format == "json" {
			var v struct {
				Parities []struct {
					Parity   string `json:"parity"`
					Measured int    `json:"measured"`
				} `json:"parities"`
			}
			if err := json.Unmarshal(b.Bytes(), &v); err != nil || len(v.Parities) != 2 || v.Parities[0].Parity != "even" || v.Parities[0].Measured != even {
				t.Errorf("json parities %+v (want even first, %d measured), %v", v.Parities, even, err)
			}
		}
	}
}

// TestSectionOrder: the core sections and the registered ones follow their order (a section
// of order below 0 after the header, the others after the latency table), and a breakdown's
// generic table sits at its place among them unless a section of its name replaces it.
func TestSectionOrder(t *testing.T) {
	RegisterSection("zz-first", -1, func(*record.Header, *metrics.Summary) *Section { return &Section{Title: "first"} })
	defer UnregisterSection("zz-first")
	s := &metrics.Summary{Breakdowns: []metrics.Breakdown{{Key: metrics.Key{Name: "k", Plural: "ks"}, Groups: []metrics.Group{{Value: "v", Summary: &metrics.Summary{}}}}}}
	var names []string
	for _, sec := range SummaryDocument(nil, s).Sections {
		names = append(names, sec.Name)
	}
	const want = "header,load,run-verdict,zz-first,summary,latency,measurement,ttft-split,ks,verdict-figures"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("sections %s, want %s", got, want)
	}
}

// TestCoreSectionsInEveryFormat: a single run's summary is its document in every format: each
// line and table cell of each section a person reads (the core ones, the verdict block, the
// features) is in the text, Markdown and HTML reports, each footnote too, and every JSON key
// of the document is in the JSON summary, in the document's order. A streamed run and a
// pooling run (whose sections are the data-chosen variant) alike.
func TestCoreSectionsInEveryFormat(t *testing.T) {
	runs, err := fileInput(t, "base.jsonl").summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	base := fileInput(t, "base.jsonl").Header
	ph, ps := poolingInput()
	for name, in := range map[string]struct {
		h *record.Header
		s *metrics.Summary
	}{"streamed": {base, runs[len(runs)-1].Summary}, "pooling": {ph, ps}} {
		var txt, md, page, js bytes.Buffer
		for _, err := range []error{Text(&txt, in.h, in.s), Markdown(&md, in.h, in.s), HTML(&page, in.h, in.s, nil), JSON(&js, in.h, in.s)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		doc := SummaryDocument(in.h, in.s)
		var cells, keys []string
		names := map[string]bool{}
		var own []string // the HTML page shows these in its runs table, apart
		for _, sec := range doc.Sections {
			names[sec.Name] = true
			for _, l := range sec.Lines {
				if sec.pageOwn && l.Label != "achieved" {
					own = append(own, l.Text)
					continue
				}
				cells = append(cells, l.Text)
			}
			for _, tb := range sec.Tables {
				for _, r := range tb.Rows {
					cells = append(cells, r...)
				}
			}
			for _, f := range sec.Footnotes {
				cells = append(cells, f.Text)
			}
			for _, f := range sec.JSON {
				keys = append(keys, f.Key)
			}
		}
		for _, want := range []string{"header", "summary", "latency", "notes"} {
			if !names[want] {
				t.Errorf("%s: the document lacks its %s section", name, want)
			}
		}
		htmlText := strings.NewReplacer("&#39;", "'", "&#43;", "+", "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#34;", `"`).Replace(page.String())
		for _, c := range own {
			if !strings.Contains(txt.String(), c) || !strings.Contains(md.String(), mdEsc(c)) {
				t.Errorf("%s: text or md lacks %q", name, c)
			}
		}
		for _, c := range cells {
			for format, out := range map[string]string{"text": txt.String(), "md": md.String(), "html": htmlText} {
				if format == "md" {
					c = mdEsc(c)
				}
				if !strings.Contains(out, c) {
					t.Errorf("%s: %s lacks %q", name, format, c)
				}
			}
		}
		dec := json.NewDecoder(&js)
		var got []string
		if _, err := dec.Token(); err != nil { // the object's opening brace
			t.Fatal(err)
		}
		for dec.More() {
			k, _ := dec.Token()
			got = append(got, k.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(keys) {
			t.Errorf("%s: JSON keys %v, want the document's %v", name, got, keys)
		}
	}
}
