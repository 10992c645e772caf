package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"servebench/record"
)

// RenderConfigSweep writes the report of a sweep over server configurations in format (text,
// md or html): idx its index, ins[i] the records of idx.Configs[i] (a zero Input for
// one that ran no point).
func RenderConfigSweep(w io.Writer, format string, idx *record.ConfigSweep, ins []Input) error {
	sweeps := make([]SweepInput, len(idx.Configs))
	for i := range idx.Configs {
		if i >= len(ins) || (ins[i].Records == nil && ins[i].Summaries == nil) {
			continue
		}
		runs, err := ins[i].summaries(format)
		if err != nil {
			return err
		}
		sweeps[i] = SweepInput{Header: ins[i].Header, Runs: runs}
	}
	secs := configSweepSections(idx, sweeps)
	var b strings.Builder
	switch format {
	case "text":
		textDocument(&b, secs)
	case "md":
		mdDocument(&b, secs)
	case "html":
		return configsPageTmpl.Execute(w, configsPage(idx, secs))
	default:
		return fmt.Errorf("--format %s: a configuration sweep's report is text, md or html (its index, the .configs.json, is its JSON)", format)
	}
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}

// configsBody is the configuration sweep's page: the answer first, then its sections, in the
// run page's head and styles (html.tmpl, whose "section" it renders them with).
const configsBody = `<body>
<main>
<p class="answer" id="answer"><b>Answer:</b> {{.Answer}}</p>
<h1>{{.Title}}</h1>
{{range .Sections}}{{template "section" .}}{{end -}}
</main>
</body>
</html>
`

var configsPageTmpl = template.Must(template.Must(pageTmpl.Clone()).New("configs").Parse(
	htmlTemplate[:strings.Index(htmlTemplate, "<body>")] + configsBody))

// configsPageData is what the page shows.
type configsPageData struct {
	Title, Answer string
	Sections      []htmlSection
}

func configsPage(idx *record.ConfigSweep, secs []*Section) configsPageData {
	p := configsPageData{Title: fmt.Sprintf("servebench sweep over %d server configurations", len(idx.Configs))}
	for _, s := range secs {
		if s.Name == "answer" {
			p.Answer = s.Lines[0].Text
			continue
		}
		title := s.Title
		if title == "" && s.Heading != "" {
			title = s.Heading
		}
		if strings.HasPrefix(s.Name, "config-") {
			title = "configuration " + strings.TrimPrefix(s.Name, "config-")
		}
		p.Sections = append(p.Sections, htmlSection{Name: s.Name, Title: title, Runs: []htmlSectionRun{{Section: s}}})
	}
	return p
}
