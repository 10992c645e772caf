// Package report renders records files for people and for programs: one registry of output
// formats (format.go: text, json, md, csv, html, gobench), each a function of an Input (a
// header and its records, or its runs' summaries), and the comparison formats of compare.
//
// A run's summary is one document (document.go): its core sections (summarydoc.go: header,
// requests, failures, latency table, footnotes) around its feature sections (verdicts,
// reasoning, sessions, stages, breakdowns, media, validity, the server's figures), which the
// text, Markdown, HTML and JSON renderers lay out; a feature adds a section by one
// RegisterSection call.
//
// Renderers only format: every figure comes from package metrics. Output is deterministic
// (no clock is read; the only time of day printed is the header's run start), so golden
// files can hold it.
package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// dash is printed for a figure that is undefined (an empty set), never a false 0.
const dash = "—"

// Text writes the summary as a compact terminal report that a person reads in five seconds:
// what was measured, how much got through, how fast, and the footnoted warnings.
// h may be nil (the header lines are then left out).
func Text(w io.Writer, h *record.Header, s *metrics.Summary) error {
	var b strings.Builder
	textDocument(&b, SummaryDocument(h, s).Sections) // document.go
	// the report opens with its header, not with the blank line before it
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}

// line writes one "label  text" line with the label in a fixed-width column.
func line(b *strings.Builder, label, format string, args ...any) {
	fmt.Fprintf(b, "%-12s%s\n", label, fmt.Sprintf(format, args...))
}

// loadLine describes the load shape and lengths of a `servebench run` header in words
// ("16 users (closed loop), 200 requests + 16 warmup, in 512 / out 128 tokens"; a replayed
// trace is "open loop: 1000 arrivals of trace.csv over 5m0s (mean 3.33 req/s)", and lengths
// that vary are "mean, p50, max"); for a configuration it does not know, it falls back to
// configLine.
func loadLine(h *record.Header) string {
	cfg := h.Config
	num := func(k string) float64 { v, _ := cfg[k].(float64); return v }
	if _, ok := cfg["input_tokens"]; !ok {
		return configLine(cfg)
	}
	parts := []string{loadShapeWords(h)}
	unit := "requests"
	if t := num("turns"); t > 1 {
		unit = fmt.Sprintf("sessions of %s turns", countWords(t))
	}
	stop := fmt.Sprintf("%s %s", countWords(num("requests")), unit)
	if d := num("duration"); d > 0 {
		stop = "for " + time.Duration(d).String()
	}
	if w := num("warmup"); w >= 0 {
		stop += fmt.Sprintf(" + %s warmup", countWords(w))
	}
	if auto, _ := cfg["warmup_auto"].(bool); auto {
		stop += " (--warmup auto)"
	}
	parts = append(parts, stop)
	parts = append(parts, lengthWords(h))
	if fixed, _ := cfg["fixed_output"].(bool); fixed {
		parts[len(parts)-1] += " (fixed output)"
	}
	return strings.Join(parts, ", ")
}

// loadShapeWords is the load of a run header: a sweep, a replayed trace, a ramp, a rate or
// closed-loop users.
func loadShapeWords(h *record.Header) string {
	cfg := h.Config
	num := func(k string) float64 { v, _ := cfg[k].(float64); return v }
	l := loadOf(h, nil)
	capS := ""
	if m := num("max_concurrency"); m > 0 {
		capS = fmt.Sprintf(", at most %s in flight", countWords(m))
	}
	switch {
	case h.Sweep != "":
		// each point's load is in its run-end line; the per-run table shows them
		return sweepLoad(h)
	case h.Load != nil && len(h.Load.Stages) > 0:
		return stagesLoad(h) // stages.go
	case l.trace != "":
		p := "open loop: replaying " + l.trace
		if ld := h.Load; ld != nil && ld.Arrivals > 0 {
			p = fmt.Sprintf("open loop: %d arrivals of %s", ld.Arrivals, l.trace)
			if ld.Span > 0 {
				p += fmt.Sprintf(" over %v (mean %.3g req/s)", time.Duration(ld.Span).Round(time.Millisecond), float64(ld.Arrivals)/time.Duration(ld.Span).Seconds())
			}
		}
		return p + capS
	case l.ramp != "":
		return fmt.Sprintf("open loop: ramp %s (%s arrivals)%s", l.ramp, l.arrival, capS)
	case l.rate > 0:
		return fmt.Sprintf("%v arrivals at %s req/s%s", cfg["arrival"], countWords(l.rate), capS)
	}
	return fmt.Sprintf("%s users (closed loop)", countWords(num("concurrency")))
}

// lengthWords are a run header's prompt and output lengths: the settings of a synthetic
// workload of fixed lengths, else the distribution the workload holds (a dataset, a trace,
// --range-ratio), or the prompts file. A run against a pooling API (embeddings, rerank) asks
// for no output: its lengths are "in N tokens a request".
func lengthWords(h *record.Header) string {
	cfg := h.Config
	num := func(k string) float64 { v, _ := cfg[k].(float64); return v }
	p, _ := cfg["prompts"].(string)
	ln := h.Workload.Lengths
	// a length distribution (--lengths, --input-dist, --output-dist) replaces the fixed
	// settings, which then were never sent, also when it drew one length only (mix:16x2)
	dist := false
	for _, k := range []string{"lengths", "input_dist", "output_dist"} {
		if v, _ := cfg[k].(string); v != "" {
			dist = true
		}
	}
	switch {
	case ln != nil && (dist || !ln.Input.Fixed() || !ln.Output.Fixed() || p != "" || h.Workload.Source != "synthetic"):
		in := "in " + distWords(ln.Input)
		if ln.Input.Max == 0 {
			in = "in ? (not measured)"
		}
		if p != "" {
			in = "prompts " + p + ", " + in
		}
		return in + outWords(h, distWords(ln.Output))
	case p != "":
		return "prompts " + p
	}
	return "in " + countWords(num("input_tokens")) + outWords(h, countWords(num("output_tokens")))
}

// outWords ends the lengths with the output length, " / out N tokens", or " tokens a request"
// for a run against a pooling API, which asks for none.
func outWords(h *record.Header, out string) string {
	if slices.Contains(metrics.PoolingAPIs, h.Target.API) {
		return " tokens a request"
	}
	return " / out " + out + " tokens"
}

// countWords is a count or rate of the header's configuration (a JSON number) in plain
// digits: 1000000 users, never "1e+06 users".
func countWords(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// distWords is a length distribution in words: one number when fixed.
func distWords(d record.Dist) string {
	if d.Fixed() {
		return fmt.Sprint(d.Max)
	}
	return fmt.Sprintf("mean %.4g, p50 %.4g, max %d", d.Mean, d.P50, d.Max)
}

// configLine lists the scalar top-level entries of the run configuration, sorted by key.
func configLine(cfg map[string]any) string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		switch v := cfg[k].(type) {
		case string, bool, float64, float32, int, int64:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, " ")
}

// sources formats a source tally as "server 970, count 10", sorted by source name.
func sources(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return strings.Join(parts, ", ")
}

// short abbreviates a content hash to 12 characters.
func short(hash string) string {
	if hash == "" {
		return dash
	}
	hash = strings.TrimPrefix(hash, "sha256:")
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// optf formats an optional figure with prec decimals, or a dash.
func optf(v *float64, prec int) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%.*f", prec, fin(*v))
}

// optPct formats a share as a percentage, or a dash when undefined.
func optPct(v *float64) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%.2f%%", fin(100**v))
}

// renderText is the text format: the summary of a one-run input; for several runs, the run
// table first, then the last run's summary; for a sweep, its per-point table and conclusions
// first (SweepTable, as `sweep` printed them).
func renderText(w io.Writer, ins []Input) error {
	summary := Text
	if ins[0].Explain {
		summary = func(w io.Writer, h *record.Header, s *metrics.Summary) error {
			if err := Text(w, h, s); err != nil {
				return err
			}
			return steadyExplain(w, s)
		}
	}
	return withRunTable(w, ins[0], "text", textDocument, summary)
}

// withRunTable renders an input's runs: the document of its several runs (multiDocument: a
// sweep's table, or the run table) when it has them, then the last run's summary, with the
// header as it stands after reading the records (the sweep-end line is the file's last).
func withRunTable(w io.Writer, in Input, format string, render func(*strings.Builder, []*Section),
	summary func(io.Writer, *record.Header, *metrics.Summary) error) error {
	runs, desc, err := repeatedRuns(in)
	if err != nil {
		return err
	}
	if runs == nil {
		if runs, err = in.summaries(format); err != nil {
			return err
		}
	}
	if doc := multiDocument(in.Header, runs, desc); doc != nil {
		if err := writeLead(w, doc.Sections, render); err != nil {
			return err
		}
	}
	return summary(w, in.Header, repeatSummary(in.Header, runs))
}
