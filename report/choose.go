package report

import (
	"fmt"
	"strings"
)

// Choose is the format named by --format, or else the one -o's extension names, or text. An
// unknown name is an error that lists the formats.
func Choose(name, out string) (Format, error) {
	if name == "" {
		if f, ok := ByExtension(out); ok {
			return f, nil
		}
		name = "text"
	}
	f, ok := Lookup(name)
	if !ok {
		return f, fmt.Errorf("--format %q: want one of %s", name, strings.Join(Formats(), ", "))
	}
	return f, nil
}

// FormatHelp lists the formats with their descriptions, one per line, for --help.
func FormatHelp() string {
	var b strings.Builder
	for _, f := range formats {
		fmt.Fprintf(&b, "  %-11s %s\n", f.Name, f.Desc)
	}
	return b.String()
}
