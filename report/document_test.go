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
