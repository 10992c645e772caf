package report

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/record"
)

// One fuzz target per format, over arbitrary records files (scripts/fuzz runs each): whatever
// the file holds, a format renders it or returns an error, never panics, never fails on a
// figure's value (NaN, ±Inf), writes JSON that parses, and shows no non-finite figure that the
// file did not spell out itself (a model called "NaN" is echoed, not computed).

func FuzzText(f *testing.F)     { fuzzFormat(f, "text") }
func FuzzJSON(f *testing.F)     { fuzzFormat(f, "json") }
func FuzzVLLM(f *testing.F)     { fuzzFormat(f, "vllm") }
func FuzzGoBench(f *testing.F)  { fuzzFormat(f, "gobench") }
func FuzzCSV(f *testing.F)      { fuzzFormat(f, "csv") }
func FuzzMarkdown(f *testing.F) { fuzzFormat(f, "md") }
func FuzzHTML(f *testing.F)     { fuzzFormat(f, "html") }

// fuzzSeeds are small records files: the start of each testdata file (header, a few records,
// a run end), and every extreme case of finite_test.go cut to its first records.
func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		seeds = append(seeds, []byte(strings.Join(lines[:min(len(lines), 8)], "")))
		seeds = append(seeds, []byte(lines[0]+strings.Join(lines[len(lines)-4:], "")))
	}
	for _, c := range extremeCases() {
		var b bytes.Buffer
		w := record.NewWriter(&b)
		_ = w.WriteHeader(header(false))
		for i := range min(len(c.recs), 6) {
			_ = w.Write(&c.recs[i])
		}
		_ = w.WriteRunEnd(&record.RunEnd{Run: 0, Stop: "requests"})
		_ = w.Flush()
		seeds = append(seeds, b.Bytes())
	}
	return seeds
}

func fuzzFormat(f *testing.F, format string) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	asJSON := format == "json" || format == "vllm"
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := record.NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		err = Render(&out, format, Input{Label: "fuzz", Header: rd.Header(), Records: skipBadLines(rd)})
		if err != nil {
			if strings.Contains(err.Error(), "unsupported value") {
				t.Fatalf("%s failed on a figure's value: %v", format, err)
			}
			return // a file that is not one run, or a header whose settings mean nothing
		}
		if !nonFinite.Match(b) && !bytes.Contains(b, []byte(`\u`)) { // else the file may spell one out
			noNonFinite(t, format, out.Bytes())
		}
		if asJSON {
			validJSON(t, format, out.Bytes())
		}
	})
}

// skipBadLines yields rd's records as report does: a cut or corrupt line is skipped, any
// other error ends the records with that error.
func skipBadLines(rd *record.Reader) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		var rec record.Record
		for {
			err := rd.Read(&rec)
			var le *record.LineError
			switch {
			case errors.Is(err, io.EOF):
				return
			case errors.As(err, &le):
				continue
			case err != nil:
				yield(nil, err)
				return
			}
			if !yield(&rec, nil) {
				return
			}
		}
	}
}
