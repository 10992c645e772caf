package compare

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// ReadSide reads a records file into a comparison side, one accumulator per run. An invalid
// line is passed to skipped with its file, and passed over.
func ReadSide(path string, skipped func(file string, err *record.LineError)) (*Side, error) {
	ins, closeAll, err := record.OpenInputs([]string{path}, false)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	opt, err := metrics.HeaderOptions(ins[0].Header)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := NewSide(ins[0].Header, opt)
	for r, err := range ins[0].Records(skipped) {
		if err != nil {
			return nil, err
		}
		s.Add(r)
	}
	return s, nil
}

// PercentOptions are the options of a comparison given in percent, as the command line takes
// them: threshold and tail in [0, 100) (tail 0: twice threshold). A threshold of 0 makes every
// significant change count. Goodput is the comparison's to set (both sides' SLOs).
func PercentOptions(threshold, tail float64, expect []string) (Options, error) {
	if !(threshold >= 0 && threshold < 100) { // NaN too: every comparison with it is false
		return Options{}, fmt.Errorf("--threshold %g: want a percentage in [0, 100)", threshold)
	}
	if !(tail >= 0 && tail < 100) {
		return Options{}, fmt.Errorf("--tail-threshold %g: want a percentage in [0, 100) (0: twice --threshold)", tail)
	}
	o := Options{Threshold: threshold / 100, TailThreshold: tail / 100, Expect: expect}
	if threshold == 0 {
		o.Threshold = 1e-9 // Threshold 0 is the default (5%); the user asked for every change
	}
	return o, nil
}

// HasSLO reports whether the side's run was given SLOs (so goodput can be compared).
func (s *Side) HasSLO() bool { return s.opt.SLO.Any() }

// RegressedMetrics names the metrics that regressed, comma-separated.
func (r *Result) RegressedMetrics() string {
	var names []string
	for _, row := range r.Rows {
		if row.Change == Regressed {
			names = append(names, row.Metric.Name)
		}
	}
	return strings.Join(names, ", ")
}

// ReadSideFrom is ReadSide of a records file read from r (name names it in errors). An
// invalid line is passed over, as ReadSide does with skipped.
func ReadSideFrom(r io.Reader, name string) (*Side, error) {
	rd, err := record.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ReadSideRecords(rd, name)
}

// RecordSource is a records file being read: its header, then its records one at a time
// (record.Reader, or compare/recorded's reader of a stored set's file).
type RecordSource interface {
	Header() *record.Header
	Read(*record.Record) error
}

// ReadSideRecords reads the rest of rd into a comparison side, passing over invalid lines
// (name names the file in errors).
func ReadSideRecords(rd RecordSource, name string) (*Side, error) {
	opt, err := metrics.HeaderOptions(rd.Header())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := NewSide(rd.Header(), opt)
	var rec record.Record
	for {
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		var le *record.LineError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s.Add(&rec)
	}
}
