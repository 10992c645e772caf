package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"slices"
	"strconv"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

func TestMarkdownGolden(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Markdown(&b, f.h, summarise(f.h, f.opt, f.recs)); err != nil {
				t.Fatal(err)
			}
			golden(t, f.name+".md.golden", b.Bytes())
		})
	}
}

func TestCSVGolden(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := CSV(&b, f.h, Records(f.recs)); err != nil {
				t.Fatal(err)
			}
			golden(t, f.name+".csv.golden", b.Bytes())
		})
	}
}

// TestCSVMatchesSummary checks that the per-request columns are the summary's figures: the
// TTFT and E2E of the completed measured rows have the summary's mean and count.
func TestCSVMatchesSummary(t *testing.T) {
	recs := basicRecords()
	h := header(false)
	s := summarise(h, metrics.Options{}, recs)
	var b bytes.Buffer
	if err := CSV(&b, h, Records(recs)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], CSVColumns) || len(rows) != len(recs)+1 {
		t.Fatalf("header %v, %d rows", rows[0], len(rows))
	}
	col := func(name string) int { return slices.Index(CSVColumns, name) }
	for _, c := range []struct {
		name string
		st   metrics.Stat
	}{{"ttft_ms", s.TTFT}, {"e2el_ms", s.E2E}, {"tpot_ms", s.TPOT}, {"ttft_first_event_ms", s.TTFTFirstEvent}} {
		var sum float64
		n := 0
		for _, row := range rows[1:] {
			if row[col("phase")] != record.PhaseMeasure || row[col("error_class")] != "" || row[col(c.name)] == "" {
				continue
			}
			v, err := strconv.ParseFloat(row[col(c.name)], 64)
			if err != nil {
				t.Fatal(err)
			}
			sum += v
			n++
		}
		if n != c.st.N || abs(sum/float64(n)-c.st.Mean/1e6) > 1e-6 {
			t.Errorf("%s: n %d mean %v, summary n %d mean %v", c.name, n, sum/float64(n), c.st.N, c.st.Mean/1e6)
		}
	}
}

func TestCSVStopsAtError(t *testing.T) {
	boom := errors.New("boom")
	seq := func(yield func(*record.Record, error) bool) {
		r := basicRecords()[1]
		if yield(&r, nil) {
			yield(nil, boom)
		}
	}
	if err := CSV(&bytes.Buffer{}, nil, seq); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

func abs(x float64) float64 { return max(x, -x) }
