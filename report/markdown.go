package report

import (
	"fmt"
	"io"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// Markdown writes the summary as GitHub-flavoured Markdown that a person pastes into a pull
// request or an issue: a line naming the run, a SIMULATED banner when the target was the
// built-in simulator, tables of throughput, latency (p50/p90/p99), failures, and the warnings
// as a numbered list. h may be nil. Figures are those of Text; only the layout differs.
func Markdown(w io.Writer, h *record.Header, s *metrics.Summary) error {
	if s.Pooling != nil {
		return markdownPooling(w, h, s) // endpoints.go: embeddings and rerank stream nothing
	}
	var b strings.Builder
	mdHeader(&b, h, s)
	doc := SummaryDocument(h, s) // document.go: the registered sections and breakdowns
	mdDocument(&b, doc.Opening())
	mdThroughput(&b, s)
	mdLatency(&b, s)
	mdDocument(&b, doc.Body())
	mdFailures(&b, s)
	mdNotes(&b, s)
	_, err := io.WriteString(w, b.String())
	return err
}

func mdHeader(b *strings.Builder, h *record.Header, s *metrics.Summary) {
	b.WriteString("### servebench results\n\n")
	if s.Simulated || (h != nil && h.Target.Simulated) {
		b.WriteString("> **SIMULATED** — the target was servebench's built-in simulator: these are not a real server's figures.\n\n")
	}
	if h == nil {
		return
	}
	fmt.Fprintf(b, "Target `%s` (api `%s`, model `%s`) · servebench %s", mdCode(h.Target.URL), mdCode(h.Target.API), mdCode(h.Target.Model), mdEsc(h.Version))
	if !h.Start.IsZero() {
		b.WriteString(" · started " + h.Start.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if h.Shard != "" {
		b.WriteString(" · shard " + mdEsc(h.Shard))
	}
	wl := h.Workload
	fmt.Fprintf(b, "  \nWorkload: %d requests, hash `%s`, %s seed %d, prompt lengths %s",
		wl.Count, short(wl.Hash), mdEsc(wl.Source), wl.Seed, orDash(wl.PromptLengths))
	if cfg := loadLine(h); cfg != "" {
		fmt.Fprintf(b, "  \nLoad: `%s`", mdCode(cfg))
	}
	b.WriteString("\n\n")
}

func mdThroughput(b *strings.Builder, s *metrics.Summary) {
	peak := dash
	if s.PeakOutputTokensPerS != nil {
		peak = fmt.Sprint(*s.PeakOutputTokensPerS)
	}
	window := dash
	if s.Window > 0 {
		window = fmt.Sprintf("%.3f", s.Window.Seconds())
	}
	rows := [][2]string{
		{"completed / failed", fmt.Sprintf("%d / %d (%.1f%%)", s.Completed, s.Failed, fin(100*s.FailureRate))},
		{"window (s)", window},
		{"requests/s", optf(s.RequestThroughput, 2)},
		{"output tokens/s", optf(s.OutputThroughput, 1)},
		{"total tokens/s", optf(s.TotalTokenThroughput, 1)},
		{"peak output tokens/s (1 s)", peak},
		{"concurrency mean / max", fmt.Sprintf("%s / %d", optf(s.MeanConcurrency, 2), s.MaxInFlight)},
		{"tokens in / out", fmt.Sprintf("%d / %d", s.InputTokens, s.OutputTokens)},
	}
	if s.SLO.Any() {
		rows = append(rows, [2]string{"goodput (req/s)", fmt.Sprintf("%s (%d of %d met %s)",
			optf(s.RequestGoodput, 2), s.GoodRequests, s.Completed, mdEsc(s.SLO.String()))})
	}
	b.WriteString("| throughput | |\n|---|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s |\n", r[0], r[1])
	}
	b.WriteString("\n")
}

func mdLatency(b *strings.Builder, s *metrics.Summary) {
	ps := tablePercentiles(s)
	b.WriteString("| latency (ms) | n | mean |")
	for _, p := range ps {
		b.WriteString(" p" + pctName(p) + " |")
	}
	b.WriteString(" max |\n|---|--:|--:|")
	b.WriteString(strings.Repeat("--:|", len(ps)))
	b.WriteString("--:|\n")
	for _, r := range tableRows(s) {
		name := r.name
		if r.scale == 1 {
			name += " (tok/s)"
		}
		fmt.Fprintf(b, "| %s | %d | %s |", name, r.st.N, num(r.st, r.st.Mean, r.scale))
		for _, p := range ps {
			v, _ := r.st.Percentile(p)
			fmt.Fprintf(b, " %s |", num(r.st, v, r.scale))
		}
		fmt.Fprintf(b, " %s |\n", num(r.st, r.st.Max, r.scale))
	}
	b.WriteString("\n")
}

func mdFailures(b *strings.Builder, s *metrics.Summary) {
	if s.Failed == 0 && s.ShortOutputs == 0 {
		return
	}
	b.WriteString("| failures | count |\n|---|--:|\n")
	for _, k := range metrics.Classes(s.Errors) {
		fmt.Fprintf(b, "| %s | %d |\n", k, s.Errors[k])
	}
	if s.ShortOutputs > 0 {
		fmt.Fprintf(b, "| short outputs (not failures) | %d |\n", s.ShortOutputs)
	}
	b.WriteString("\n")
}

func mdNotes(b *strings.Builder, s *metrics.Summary) {
	if len(s.Warnings) == 0 {
		return
	}
	b.WriteString("**Warnings**\n\n")
	for i, w := range finiteWarnings(s.Warnings) {
		fmt.Fprintf(b, "%d. **%s**: %s\n", i+1, w.Level, mdEsc(w.Text))
		if w.Action != "" {
			fmt.Fprintf(b, "   Next: %s\n", mdEsc(w.Action))
		}
	}
}

// mdEsc escapes the characters that would break a table cell or start Markdown markup. Underscores
// are left alone: GitHub does not emphasise inside words (http_5xx).
func mdEsc(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "`", "'", "<", "&lt;", "\n", " ").Replace(s)
}

// mdCode makes s safe inside a code span: backticks and pipes cannot be escaped there.
func mdCode(s string) string { return strings.NewReplacer("`", "'", "|", "¦").Replace(s) }

// renderMarkdown is the md format: the layout of renderText in Markdown.
func renderMarkdown(w io.Writer, ins []Input) error {
	if len(ins) == 2 {
		return renderCompareMarkdown(w, ins) // comparepage.go
	}
	return withRunTable(w, ins[0], "md", mdDocument, Markdown)
}
