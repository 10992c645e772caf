package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// toyFormat is a format written the way a new one is added: a renderer in its own file (here,
// this test file) and one line in the formats table (here, the line in TestToyFormat).
func renderToy(w io.Writer, ins []Input) error {
	runs, err := ins[0].summaries("toy")
	if err != nil {
		return err
	}
	last := runs[len(runs)-1].Summary
	_, err = fmt.Fprintf(w, "%s: %d runs, %d completed in the last\n", ins[0].label(), len(runs), last.Completed)
	return err
}

func TestToyFormat(t *testing.T) {
	defer func(saved []Format) { formats = saved }(formats)
	formats = append(slices.Clip(formats), Format{Name: "toy", Ext: ".toy", Desc: "a line per file", render: renderToy}) // the registry line

	if !slices.Contains(Formats(), "toy") {
		t.Fatalf("Formats() = %v, no toy", Formats())
	}
	f, ok := ByExtension("out/RUN.TOY")
	if !ok || f.Name != "toy" {
		t.Fatalf("ByExtension(RUN.TOY) = %v, %v", f.Name, ok)
	}
	var b bytes.Buffer
	if err := Render(&b, "toy", fileInput(t, "repeat.jsonl")); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "repeat: 3 runs, 11 completed in the last\n"; got != want {
		t.Errorf("toy format wrote %q, want %q", got, want)
	}
}

func TestRegistry(t *testing.T) {
	if got, want := Formats(), []string{"text", "json", "vllm", "md", "csv", "runs-csv", "slices-csv", "slices-json", "html", "gobench", "otlp-json"}; !slices.Equal(got, want) {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	if got, want := CompareFormats(), []string{"text", "json"}; !slices.Equal(got, want) {
		t.Errorf("CompareFormats() = %v, want %v", got, want)
	}
	exts := map[string]bool{}
	for _, name := range Formats() {
		f, _ := Lookup(name)
		if f.Desc == "" || f.render == nil || !strings.HasPrefix(f.Ext, ".") || exts[f.Ext] {
			t.Errorf("format %s: desc %q, ext %q (each extension must select one format)", name, f.Desc, f.Ext)
		}
		exts[f.Ext] = true
		if g, ok := ByExtension("dir.x/report" + strings.ToUpper(f.Ext)); !ok || g.Name != name {
			t.Errorf("ByExtension(%s) = %s, %v", f.Ext, g.Name, ok)
		}
	}
	for p, want := range map[string]string{"run.json": "json", "run.vllm.json": "vllm", "RUN.VLLM.JSON": "vllm", "d.vllm.json/r.json": "json"} {
		if f, ok := ByExtension(p); !ok || f.Name != want {
			t.Errorf("ByExtension(%s) = %s, %v; want %s", p, f.Name, ok, want)
		}
	}
	for _, p := range []string{"report", "report.pdf", "dir.html/report"} {
		if f, ok := ByExtension(p); ok {
			t.Errorf("ByExtension(%s) = %s", p, f.Name)
		}
	}
	if _, ok := Lookup("pdf"); ok {
		t.Error("Lookup(pdf) found a format")
	}
	if err := Render(io.Discard, "pdf", Input{}); err == nil || !strings.Contains(err.Error(), "text, json, vllm, md") {
		t.Errorf("unknown format: err %v", err)
	}
	if err := RenderCompare(io.Discard, "md", nil, "a", "b"); err == nil {
		t.Error("unknown compare format: no error")
	}
}

// TestInputCount checks that only html and md (the compare page) take two inputs, and no
// format none.
func TestInputCount(t *testing.T) {
	for _, name := range Formats() {
		two := []Input{fileInput(t, "base.jsonl"), fileInput(t, "cand.jsonl")}
		err := Render(io.Discard, name, two...)
		if (err == nil) != (name == "html" || name == "md") {
			t.Errorf("%s of two inputs: err %v", name, err)
		}
		if err := Render(io.Discard, name); err == nil {
			t.Errorf("%s of no input: no error", name)
		}
	}
}
