package report

import (
	"slices"
	"sync"

	"servebench/metrics"
	"servebench/record"
)

// The report document: a summary as sections of data (lines, verdicts, tables, figures,
// footnotes), built once per summary: the core sections (summarydoc.go: header, requests,
// failures, latency, notes) around the registered feature sections, and rendered by four
// renderers (document_render.go: text, Markdown, HTML, JSON) that know no feature.
// A feature adds a section by one RegisterSection call; a per-request key registered in
// metrics (metrics.RegisterKey) adds a breakdown, which every format shows as one table
// (breakdown.go) without any registration here. benchstat is the model: its
// Collection.Tables builds tables of rows, and its text and HTML writers only render them.

// Document is one summary's sections, in order.
type Document struct {
	Sections []*Section
}

// Section is one topic of a report: what a feature has to say about a run.
type Section struct {
	// Name identifies the section: the HTML anchor, and the JSON key when JSON is empty.
	Name string
	// Title is the heading in Markdown and HTML, and the text report's label when the
	// section has no lines of its own.
	Title string
	// Heading, when set, is a line the text report writes before the section's own lines
	// ("server during the window (its own Prometheus figures)").
	Heading string
	// Attached continues the section before it: the text report writes no blank line between
	// the two (the failures under the requests).
	Attached bool
	Verdicts []Verdict
	Lines    []Line
	Tables   []*Table
	Figures  []Figure
	// Notes say what the figures are, after them.
	Notes []string
	// Footnotes are the numbered warnings of the run, each with its level and next step.
	Footnotes []Footnote
	// JSON are the keys the section adds to the JSON summary, in order, as data (ordered
	// objects, numbers, strings). When nil, the JSON renderer writes the section's lines and
	// tables under Name; an empty, non-nil slice adds nothing (the figures are keys already).
	JSON []Field
	// order is the registered order: below 0, the section opens the report (before any
	// figure); otherwise it follows the latency table.
	order int
	// pageOwn marks a section the HTML page shows in a place of its own: the header in its
	// runs table, the footnotes in its warnings list (both cover a sweep's runs too).
	pageOwn bool
}

// Opening are the sections that open the report, before any figure (an order below 0: the
// header and the registered verdict block).
func (d *Document) Opening() []*Section {
	return slices.DeleteFunc(slices.Clone(d.Sections), func(s *Section) bool { return s.order >= 0 })
}

// Body are the sections that follow the report's opening: the requests, failures and latency
// table, the features, the footnotes.
func (d *Document) Body() []*Section {
	return slices.DeleteFunc(slices.Clone(d.Sections), func(s *Section) bool { return s.order < 0 })
}

// Verdict is one line of a judgement: its label, its words, and whether it is good, bad or
// unsure (the HTML page colours it).
type Verdict struct {
	Label, Text, Class string
	// Why is the trace behind the judgement, one step a line (the steady check's rules that
	// fired): the HTML page shows it on demand, text with --explain (ExplainSteady).
	Why []string
}

// Line is one "label  text" line; an empty label continues the line above.
type Line struct {
	Label, Text string
}

// Table is a table of cells, the first column a row's name, the others figures.
type Table struct {
	Head []string
	Rows [][]string
	// Note says what the table counts, under it.
	Note string
	// Labels is how many leading columns name a row (left-aligned in Markdown); the columns
	// after them hold figures, right-aligned. Zero leaves every column left-aligned.
	Labels int
	// Widths, when set, are the text report's column widths as in %*s: negative for a
	// left-aligned column; the columns are then one space apart. Without them the text
	// report aligns the columns on their widest cell.
	Widths []int
}

// Footnote is one numbered note: its level ("may distort"), the level's CSS class, what it
// says and what to do next.
type Footnote struct {
	Level, Class, Text, Action string
}

// Figure is a chart as data: named series of points. Renderers that cannot draw it list
// its points.
type Figure struct {
	Title, X, Y string
	Series      []FigureSeries
}

// FigureSeries is one line of a Figure.
type FigureSeries struct {
	Name string
	X, Y []float64
}

// Field is one key of the JSON summary and its value.
type Field struct {
	Key   string
	Value any
}

// SectionFunc builds a section of one run's summary; nil when the run has nothing to say
// under it. h may be nil.
type SectionFunc func(h *record.Header, s *metrics.Summary) *Section

type sectionEntry struct {
	name  string
	order int
	build SectionFunc
}

var (
	sectionsMu sync.Mutex
	sections   []sectionEntry
)

// RegisterSection adds a section to every summary's document, placed by order (ties: by
// name); a section of order below 0 opens the report, before any figure. A section registered under a breakdown's plural name ("stages") replaces that
// breakdown's generic table. Registering a name again replaces the section.
func RegisterSection(name string, order int, build SectionFunc) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	sections = slices.DeleteFunc(sections, func(e sectionEntry) bool { return e.name == name })
	sections = append(sections, sectionEntry{name, order, build})
	slices.SortStableFunc(sections, func(a, b sectionEntry) int {
		if a.order != b.order {
			return a.order - b.order
		}
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
}

// UnregisterSection removes the section called name (for tests that register a toy one).
func UnregisterSection(name string) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	sections = slices.DeleteFunc(sections, func(e sectionEntry) bool { return e.name == name })
}

// breakdownOrder places the generic breakdown tables among the registered sections.
const breakdownOrder = 30

// SummaryDocument builds the document of one run's summary, in reading order: the header,
// the registered sections that open the report (the verdict block), the requests, failures
// and latency table, every registered section that has something to say and a table for
// each breakdown no section replaces, and the footnotes. JSON-only sections between them keep
// the JSON summary's keys in their order (summarydoc.go). h may be nil.
func SummaryDocument(h *record.Header, s *metrics.Summary) *Document {
	feats := featureSections(h, s)
	d := &Document{}
	d.add(headerSection(h, s), loadSection(h, s))
	for _, sec := range feats {
		if sec.order < 0 {
			d.add(sec)
		}
	}
	d.add(requestsSection(h, s), failuresSection(s), latencySection(s), measurementSection(s))
	for _, sec := range feats {
		if sec.order >= 0 {
			d.add(sec)
		}
	}
	d.add(verdictFieldsSection(s), poolingSection(s), notesSection(s))
	return d
}

// add appends the sections that are not nil.
func (d *Document) add(secs ...*Section) {
	for _, sec := range secs {
		if sec != nil {
			d.Sections = append(d.Sections, sec)
		}
	}
}

// Without is the document less the section called name.
func (d *Document) Without(name string) *Document {
	return &Document{Sections: slices.DeleteFunc(slices.Clone(d.Sections), func(s *Section) bool { return s.Name == name })}
}

// featureSections are every registered section that has something to say about the run, and
// a table for each breakdown no section replaces, in their order.
func featureSections(h *record.Header, s *metrics.Summary) []*Section {
	sectionsMu.Lock()
	entries := slices.Clone(sections)
	sectionsMu.Unlock()
	claimed := map[string]bool{}
	for _, e := range entries {
		claimed[e.name] = true
	}
	var out []*Section
	done := false
	addBreakdowns := func() {
		done = true
		for _, b := range s.Breakdowns {
			if !claimed[b.Key.Plural] {
				sec := breakdownSection(b)
				sec.order = breakdownOrder
				out = append(out, sec)
			}
		}
	}
	for _, e := range entries {
		if !done && e.order > breakdownOrder {
			addBreakdowns()
		}
		if sec := e.build(h, s); sec != nil {
			if sec.Name == "" {
				sec.Name = e.name
			}
			sec.order = e.order
			out = append(out, sec)
		}
	}
	if !done {
		addBreakdowns()
	}
	return out
}
