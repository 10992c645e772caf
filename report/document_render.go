package report

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// The four renderers of a Document. Each knows lines, verdicts, tables, figures and notes,
// and nothing of the features that filled them.

// textDocument writes each section after a blank line (none before an attached one): its
// heading (its name when it has neither heading nor lines of its own, nor a table that labels
// it), its verdicts and lines in the label column, its tables (in fixed columns when they give
// widths, else aligned right on their widest cell), figures, notes in parentheses and
// numbered footnotes.
func textDocument(b *strings.Builder, secs []*Section) {
	for _, sec := range secs {
		if !sec.forPeople() {
			continue
		}
		if !sec.Attached {
			b.WriteString("\n")
		}
		switch {
		case sec.Heading != "":
			b.WriteString(sec.Heading + "\n")
		case len(sec.Lines) == 0 && len(sec.Verdicts) == 0 && len(sec.Footnotes) == 0 && !sec.labelledByTable():
			b.WriteString(sec.Name + "\n")
		}
		for _, v := range sec.Verdicts {
			line(b, v.Label, "%s", v.Text)
		}
		for _, l := range sec.Lines {
			line(b, l.Label, "%s", l.Text)
		}
		for _, t := range sec.Tables {
			textTable(b, t)
		}
		for _, f := range sec.Figures {
			textFigure(b, f)
		}
		for _, n := range sec.Notes {
			fmt.Fprintf(b, "(%s)\n", n)
		}
		for i, f := range sec.Footnotes {
			if f.Level == "" {
				fmt.Fprintf(b, "  [%d] %s\n", i+1, f.Text)
				continue
			}
			fmt.Fprintf(b, "  [%d] %s: %s\n", i+1, f.Level, f.Text)
			if f.Action != "" {
				fmt.Fprintf(b, "      next: %s\n", f.Action)
			}
		}
	}
}

// textTable writes a table: in its fixed columns one space apart when it gives widths, else
// right-aligned on each column's widest cell with its label columns (Labels) left-aligned, no
// line ending in spaces; its note follows in parentheses.
func textTable(b *strings.Builder, t *Table) {
	if t.Widths != nil {
		for _, r := range append([][]string{t.Head}, t.Rows...) {
			for i, c := range r {
				if i > 0 {
					b.WriteString(" ")
				}
				w := 0
				if i < len(t.Widths) {
					w = t.Widths[i]
				}
				fmt.Fprintf(b, "%*s", w, c)
			}
			b.WriteString("\n")
		}
	} else {
		var tb strings.Builder
		tw := tabwriter.NewWriter(&tb, 2, 4, 2, ' ', tabwriter.AlignRight)
		head, rows := textLabels(t)
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		tw.Flush()
		for _, l := range strings.SplitAfter(tb.String(), "\n") {
			if l != "" {
				b.WriteString(strings.TrimRight(l, " \n") + "\n")
			}
		}
	}
	if t.Note != "" {
		fmt.Fprintf(b, "(%s)\n", t.Note)
	}
}

// labelledByTable reports whether the section's first table labels it in text: a table in
// fixed columns writes its head's first cell ("latency (ms)") in the label column.
func (sec *Section) labelledByTable() bool {
	return len(sec.Tables) > 0 && sec.Tables[0].Widths != nil
}

// textLabels are a table's cells with its label columns (Labels) padded on the right to
// their widest cell, so that the right-aligning writer leaves them left-aligned.
func textLabels(t *Table) ([]string, [][]string) {
	if t.Labels <= 0 {
		return t.Head, t.Rows
	}
	all := append([][]string{t.Head}, t.Rows...)
	out := make([][]string, len(all))
	for i, r := range all {
		out[i] = slices.Clone(r)
	}
	for c := 0; c < t.Labels; c++ {
		w := 0
		for _, r := range all {
			if c < len(r) {
				w = max(w, utf8.RuneCountInString(r[c]))
			}
		}
		for _, r := range out {
			if c < len(r) {
				r[c] += strings.Repeat(" ", w-utf8.RuneCountInString(r[c]))
			}
		}
	}
	return out[0], out[1:]
}

// forPeople reports whether the section has anything for text, Markdown and HTML: one of only
// JSON keys (a key every summary has, null when undefined) is for JSON alone.
func (sec *Section) forPeople() bool {
	return len(sec.Verdicts)+len(sec.Lines)+len(sec.Tables)+len(sec.Figures)+len(sec.Notes)+len(sec.Footnotes) > 0
}

// textFigure lists a figure's points, one series a line.
func textFigure(b *strings.Builder, f Figure) {
	line(b, "figure", "%s (%s against %s)", f.Title, f.Y, f.X)
	for _, s := range f.Series {
		line(b, "", "%s: %s", s.Name, pointList(s))
	}
}

func pointList(s FigureSeries) string {
	parts := make([]string, 0, len(s.X))
	for i := range s.X {
		if i < len(s.Y) {
			parts = append(parts, fmt.Sprintf("(%.4g, %.4g)", fin(s.X[i]), fin(s.Y[i])))
		}
	}
	return strings.Join(parts, " ")
}

// mdDocument writes each section under a level-3 heading (none without a title): its verdicts
// as bold-labelled lines, its lines as a two-column table, then its tables, figures, notes and
// footnotes (a numbered list).
func mdDocument(b *strings.Builder, secs []*Section) {
	for _, sec := range secs {
		if !sec.forPeople() {
			continue
		}
		if sec.Title != "" {
			fmt.Fprintf(b, "### %s\n\n", mdEsc(sec.Title))
		}
		if len(sec.Verdicts) > 0 {
			for _, v := range sec.Verdicts {
				fmt.Fprintf(b, "**%s**: %s  \n", v.Label, mdEsc(v.Text))
			}
			b.WriteString("\n")
		}
		if len(sec.Lines) > 0 {
			b.WriteString("| | |\n|---|---|\n")
			for _, l := range sec.Lines {
				fmt.Fprintf(b, "| %s | %s |\n", mdEsc(l.Label), mdEsc(l.Text))
			}
			b.WriteString("\n")
		}
		for _, t := range sec.Tables {
			b.WriteString("| " + strings.Join(mdCells(t.Head), " | ") + " |\n|" + mdAlign(t) + "\n")
			for _, r := range t.Rows {
				b.WriteString("| " + strings.Join(mdCells(r), " | ") + " |\n")
			}
			b.WriteString("\n")
			if t.Note != "" {
				b.WriteString(mdEsc(t.Note) + ".\n\n")
			}
		}
		for _, f := range sec.Figures {
			fmt.Fprintf(b, "%s (%s against %s):\n\n", mdEsc(f.Title), mdEsc(f.Y), mdEsc(f.X))
			for _, s := range f.Series {
				fmt.Fprintf(b, "- %s: %s\n", mdEsc(s.Name), pointList(s))
			}
			b.WriteString("\n")
		}
		for _, n := range sec.Notes {
			b.WriteString(mdEsc(n) + "\n\n")
		}
		for i, f := range sec.Footnotes {
			if f.Level == "" {
				fmt.Fprintf(b, "%d. %s\n", i+1, mdEsc(f.Text))
				continue
			}
			fmt.Fprintf(b, "%d. **%s**: %s\n", i+1, f.Level, mdEsc(f.Text))
			if f.Action != "" {
				fmt.Fprintf(b, "   Next: %s\n", mdEsc(f.Action))
			}
		}
		if len(sec.Footnotes) > 0 {
			b.WriteString("\n")
		}
	}
}

// mdAlign is a table's alignment row: its label columns left, its figures right (Labels).
func mdAlign(t *Table) string {
	if t.Labels <= 0 || t.Labels >= len(t.Head) {
		return strings.Repeat("---|", len(t.Head))
	}
	return strings.Repeat("---|", t.Labels) + strings.Repeat("--:|", len(t.Head)-t.Labels)
}

func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdEsc(c)
	}
	return out
}

// jsonDocument adds each section's JSON keys to o; a section without any is written under
// its name as its lines (label: text), tables (head and rows), figures and notes.
func jsonDocument(o *object, d *Document) {
	for _, sec := range d.Sections {
		if sec.JSON != nil {
			for _, f := range sec.JSON {
				o.set(f.Key, f.Value)
			}
			continue
		}
		so := &object{}
		if len(sec.Verdicts) > 0 {
			vo := &object{}
			for _, v := range sec.Verdicts {
				vo.set(v.Label, v.Text)
			}
			so.set("verdicts", vo)
		}
		if len(sec.Lines) > 0 {
			lo := &object{}
			for _, l := range sec.Lines {
				lo.set(l.Label, l.Text)
			}
			so.set("lines", lo)
		}
		if len(sec.Tables) > 0 {
			var ts []*object
			for _, t := range sec.Tables {
				to := &object{}
				to.set("head", t.Head)
				to.set("rows", t.Rows)
				to.set("note", t.Note)
				ts = append(ts, to)
			}
			so.set("tables", ts)
		}
		if len(sec.Figures) > 0 {
			so.set("figures", sec.Figures)
		}
		if len(sec.Notes) > 0 {
			so.set("notes", sec.Notes)
		}
		o.set(sec.Name, so)
	}
}

// htmlSection is one section of the page, with the section of each run that has it.
type htmlSection struct {
	Name, Title string
	Two         bool // the page has two runs: each run's part is labelled
	Runs        []htmlSectionRun
}

// htmlSectionRun is one run's section.
type htmlSectionRun struct {
	Label, Class string
	*Section
}

// htmlSections are the opening and the body sections of the runs' documents, each in the
// first document's order (a section only the second run has follows those of the first).
func htmlSections(runs []Run) (opening, body []htmlSection) {
	return htmlGather(runs, (*Document).Opening), htmlGather(runs, (*Document).Body)
}

func htmlGather(runs []Run, part func(*Document) []*Section) []htmlSection {
	var out []htmlSection
	index := map[string]int{}
	for i, r := range runs {
		if r.Summary == nil || r.sweep != nil { // a sweep's page has its per-point table instead
			continue
		}
		for _, sec := range part(SummaryDocument(r.Header, r.Summary)) {
			if !sec.forPeople() || sec.pageOwn {
				continue
			}
			k, ok := index[sec.Name]
			if !ok {
				k = len(out)
				index[sec.Name] = k
				out = append(out, htmlSection{Name: sec.Name, Title: sec.Title, Two: len(runs) == 2})
			}
			out[k].Runs = append(out[k].Runs, htmlSectionRun{Label: r.Label, Class: fmt.Sprintf("c%d", i), Section: sec})
		}
	}
	return out
}
