package report

import (
	"fmt"
	"io"
	"strings"

	"servebench/compare"
)

// CompareFormat is one output format of `servebench compare`, a row of the table
// compareFormats as Format is of formats.
type CompareFormat struct {
	Name string // --format value
	Ext  string // file extension with its dot
	Desc string // one line for --help
	// render writes the comparison; baseName and candName label the two sides.
	render func(w io.Writer, r *compare.Result, baseName, candName string) error
}

// compareFormats is the registry of comparison formats, in the order of the help text.
var compareFormats = []CompareFormat{
	{Name: "text", Ext: ".txt", Desc: "conditions, one row per metric, the verdict and footnotes", render: CompareText},
	{Name: "json", Ext: ".json", Desc: "one JSON object, for CI", render: CompareJSON},
}

// CompareFormats returns the comparison format names in the order of the help text.
func CompareFormats() []string {
	return names(compareFormats, func(f CompareFormat) string { return f.Name })
}

// LookupCompare returns the comparison format called name.
func LookupCompare(name string) (CompareFormat, bool) {
	return find(compareFormats, func(f CompareFormat) bool { return f.Name == name })
}

// Render writes r; baseName and candName label the two sides (usually their file names).
func (f CompareFormat) Render(w io.Writer, r *compare.Result, baseName, candName string) error {
	return f.render(w, r, baseName, candName)
}

// RenderCompare writes r in the comparison format called name.
func RenderCompare(w io.Writer, name string, r *compare.Result, baseName, candName string) error {
	f, ok := LookupCompare(name)
	if !ok {
		return fmt.Errorf("unknown compare format %q: want one of %s", name, strings.Join(CompareFormats(), ", "))
	}
	return f.Render(w, r, baseName, candName)
}
