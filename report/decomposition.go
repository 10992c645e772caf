package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// The "TTFT decomposition" section: TTFT taken apart by the server's own spans joined to each
// request (metrics.Decomposition), a table of its parts at p50, p90 and p99, and in JSON
// "ttft_decomposition". Nothing when the run received no spans.
func init() { RegisterSection("ttft-decomposition", 2, decompositionSection) }

// decompositionParts are the table's rows: label, JSON key, distribution.
var decompositionParts = []struct {
	label, key string
	st         func(d *metrics.Decomposition) metrics.Stat
}{
	{"before server", "before_server", func(d *metrics.Decomposition) metrics.Stat { return d.BeforeServer }},
	{"  queue", "server_queue", func(d *metrics.Decomposition) metrics.Stat { return d.Queue }},
	{"  prefill", "server_prefill", func(d *metrics.Decomposition) metrics.Stat { return d.Prefill }},
	{"  server other", "server_other", func(d *metrics.Decomposition) metrics.Stat { return d.ServerOther }},
	{"server TTFT", "server_ttft", func(d *metrics.Decomposition) metrics.Stat { return d.ServerTTFT }},
	{"to client", "to_client", func(d *metrics.Decomposition) metrics.Stat { return d.ToClient }},
	{"TTFT (client)", "ttft", func(d *metrics.Decomposition) metrics.Stat { return d.TTFT }},
	{"server decode", "server_decode", func(d *metrics.Decomposition) metrics.Stat { return d.Decode }},
	{"server E2E", "server_e2e", func(d *metrics.Decomposition) metrics.Stat { return d.ServerE2E }},
}

var decompositionPcts = []float64{50, 90, 99}

func decompositionSection(_ *record.Header, s *metrics.Summary) *Section {
	d := s.Decomposition
	if d == nil {
		return nil
	}
	t := &Table{Head: []string{"TTFT decomposition (ms)", "n", "p50", "p90", "p99"}, Labels: 1}
	for _, p := range decompositionParts {
		st := p.st(d)
		r := []string{p.label, fmt.Sprint(st.N)}
		for _, q := range decompositionPcts {
			r = append(r, msP(st, q))
		}
		t.Rows = append(t.Rows, r)
	}
	t.Note = "TTFT = before server + server TTFT + to client; server TTFT = queue + prefill + server other (each column's parts need not add up: percentiles of parts are not parts of a percentile)"
	return &Section{Name: "ttft-decomposition", Title: "TTFT decomposition (server spans)",
		Heading: "TTFT decomposition (the server's spans joined by trace id)", Tables: []*Table{t},
		Lines: decompositionLines(d), JSON: []Field{{"ttft_decomposition", decompositionJSON(d)}}}
}

// decompositionLines say how many requests joined, which are missing, and what else came.
func decompositionLines(d *metrics.Decomposition) []Line {
	join := fmt.Sprintf("%d of %d completed requests joined to their server span", d.Joined, d.Requests)
	if d.Missing > 0 {
		join += fmt.Sprintf("; %d missing (no span arrived: left out, never filled in)", d.Missing)
	}
	lines := []Line{{"spans", join}}
	if d.ClockSkew > 0 {
		lines = append(lines, Line{"clocks", fmt.Sprintf("%d requests had before server or to client below 0: the server's clock disagrees with this machine's; their sum (TTFT − server TTFT) is still right", d.ClockSkew)})
	}
	if d.Other > 0 {
		var ns []string
		for _, n := range d.OtherNames {
			ns = append(ns, fmt.Sprintf("%s %d", n.Name, n.Count))
		}
		lines = append(lines, Line{"other spans", fmt.Sprintf("%d of %d received belong to no request of this run: %s", d.Other, d.Received, strings.Join(ns, ", "))})
	}
	if d.Rejected > 0 || d.Dropped > 0 {
		lines = append(lines, Line{"refused", fmt.Sprintf("%d exports refused (not OTLP, or over the size limit); %d spans dropped over the receiver's bound", d.Rejected, d.Dropped)})
	}
	return lines
}

func decompositionJSON(d *metrics.Decomposition) *object {
	o := &object{}
	o.set("requests", d.Requests)
	o.set("joined", d.Joined)
	o.set("missing", d.Missing)
	o.set("clock_skew_requests", d.ClockSkew)
	for _, p := range decompositionParts {
		statKeys(o, p.key, "_ms", p.st(d), decompositionPcts, 1e6)
	}
	o.set("spans_received", d.Received)
	o.set("spans_other", d.Other)
	names := &object{}
	for _, n := range d.OtherNames {
		names.set(n.Name, n.Count)
	}
	o.set("spans_other_names", names)
	o.set("exports_rejected", d.Rejected)
	o.set("spans_dropped", d.Dropped)
	return o
}
