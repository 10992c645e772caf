package report

import (
	"io"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// Markdown writes the summary as GitHub-flavoured Markdown that a person pastes into a pull
// request or an issue: the sections of its document (the header with the SIMULATED line when
// the target was the built-in simulator, the verdicts, the requests and throughput, failures,
// latency (p50/p90/p99), every feature's section) as tables under level-3 headings, and the
// warnings as a numbered list. h may be nil. Its lines and cells are those of Text; only the
// layout differs.
func Markdown(w io.Writer, h *record.Header, s *metrics.Summary) error {
	var b strings.Builder
	mdDocument(&b, SummaryDocument(h, s).Sections) // document.go
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEsc escapes the characters that would break a table cell or start Markdown markup. Underscores
// are left alone: GitHub does not emphasise inside words (http_5xx).
func mdEsc(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "`", "'", "<", "&lt;", "\n", " ").Replace(s)
}

// renderMarkdown is the md format: the layout of renderText in Markdown.
func renderMarkdown(w io.Writer, ins []Input) error {
	if len(ins) == 2 {
		return renderCompareMarkdown(w, ins) // comparepage.go
	}
	return withRunTable(w, ins[0], "md", mdDocument, Markdown)
}
