package telemetry

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"servebench/record"
)

// maxLine is the longest exposition line kept. A line is one series (or a HELP text), and no
// serving metric needs more; longer lines are dropped and counted as cut, so that one
// pathological line cannot make the filtered body grow past what the series cap suggests.
const maxLine = 64 << 10

// limits bound one scrape's body.
type limits struct {
	body   int64 // bytes
	series int   // sample lines kept
}

// errTooBig is a body over the byte cap.
type errTooBig struct{ cap int64 }

func (e errTooBig) Error() string { return fmt.Sprintf("body over %d bytes", e.cap) }

// prefilter copies the lines of kept families from body into out, streaming: the body is
// never held whole, and the expfmt parser (which builds every family of its input in memory)
// only sees what is kept, at most lim.series sample lines. It returns the bytes read, the
// sample lines kept and those cut (over the series cap, or over maxLine). Reading continues
// past the series cap so the cut count is exact, bounded by the byte cap and the caller's
// timeout.
func prefilter(body io.Reader, f *Filter, lim limits, out *bytes.Buffer) (n int64, kept, cut int, err error) {
	cr := &countReader{r: io.LimitReader(body, lim.body+1)}
	br := bufio.NewReaderSize(cr, maxLine)
	for {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			for rerr == bufio.ErrBufferFull { // a line over maxLine: drop it whole
				_, rerr = br.ReadSlice('\n')
			}
			cut++
			line = nil
		}
		if cr.n > lim.body {
			return cr.n, kept, cut, errTooBig{lim.body}
		}
		if len(line) > 0 {
			switch name, sample := lineName(line); {
			case len(name) == 0 || !f.keepSample(name):
			case !sample:
				out.Write(line)
			case kept >= lim.series:
				cut++
			default:
				kept++
				out.Write(line)
			}
		}
		if rerr == io.EOF {
			if k := out.Len(); k > 0 && out.Bytes()[k-1] != '\n' {
				out.WriteByte('\n') // a last line without newline is still a line
			}
			return cr.n, kept, cut, nil
		}
		if rerr != nil {
			return cr.n, kept, cut, rerr
		}
	}
}

// lineName returns the metric name a line is about and whether it is a sample line: the
// name of a HELP or TYPE comment (sample false), or a sample line's name (before '{' or a
// blank; a quoted UTF-8 name inside the braces). Other comments and blank lines give nil.
// It allocates nothing: it runs on every line of every scrape.
func lineName(line []byte) ([]byte, bool) {
	line = bytes.TrimLeft(line, " \t")
	if len(line) == 0 || line[0] == '\n' || line[0] == '\r' {
		return nil, false
	}
	if line[0] == '#' {
		rest := bytes.TrimLeft(line[1:], " \t")
		kw, rest, _ := bytes.Cut(rest, []byte(" "))
		if string(kw) != "HELP" && string(kw) != "TYPE" {
			return nil, false
		}
		rest = bytes.TrimLeft(rest, " \t")
		if end := bytes.IndexAny(rest, " \t\r\n"); end >= 0 {
			rest = rest[:end]
		}
		return bytes.Trim(rest, `"`), false
	}
	if line[0] == '{' {
		if rest, ok := bytes.CutPrefix(bytes.TrimLeft(line[1:], " \t"), []byte(`"`)); ok {
			if i := bytes.IndexByte(rest, '"'); i >= 0 {
				return rest[:i], true
			}
		}
		return nil, true
	}
	end := bytes.IndexAny(line, "{ \t\r\n")
	if end < 0 {
		end = len(line)
	}
	return line[:end], true
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// parse reads the filtered text with the maintained parser (text format 0.0.4) and converts
// its families to series, sorted by name; samples whose value is NaN or infinite are dropped
// and counted.
func parse(text []byte) (series []record.Series, nonFinite int, err error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		var pe expfmt.ParseError
		if errors.As(err, &pe) {
			return nil, 0, fmt.Errorf("parse: line %d: %s", pe.Line, pe.Msg)
		}
		return nil, 0, fmt.Errorf("parse: %w", err)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mf := fams[n]
		for _, m := range mf.GetMetric() {
			s, ok := convert(n, mf.GetType(), m)
			if !ok {
				nonFinite++
				continue
			}
			series = append(series, s)
		}
	}
	return series, nonFinite, nil
}

// convert turns one dto metric into a Series; false when a value it needs is not finite.
func convert(name string, typ dto.MetricType, m *dto.Metric) (record.Series, bool) {
	s := record.Series{Name: name}
	if lp := m.GetLabel(); len(lp) > 0 {
		s.Labels = make(map[string]string, len(lp))
		for _, l := range lp {
			s.Labels[l.GetName()] = l.GetValue()
		}
	}
	switch typ {
	case dto.MetricType_COUNTER:
		s.Type = record.TypeCounter
		return s, setValue(&s, m.GetCounter().GetValue())
	case dto.MetricType_GAUGE:
		s.Type = record.TypeGauge
		return s, setValue(&s, m.GetGauge().GetValue())
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		s.Type = record.TypeHistogram
		return s, histogram(&s, m.GetHistogram())
	case dto.MetricType_SUMMARY:
		s.Type = record.TypeSummary
		return s, summary(&s, m.GetSummary())
	default:
		s.Type = record.TypeUntyped
		return s, setValue(&s, m.GetUntyped().GetValue())
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func setValue(s *record.Series, v float64) bool {
	s.Value = &v
	return finite(v)
}

func histogram(s *record.Series, h *dto.Histogram) bool {
	sum, count := h.GetSampleSum(), float64(h.GetSampleCount())
	if h.SampleCountFloat != nil {
		count = h.GetSampleCountFloat()
	}
	if !finite(sum) || !finite(count) {
		return false
	}
	s.Sum, s.Count = &sum, &count
	for _, b := range h.GetBucket() {
		le, c := b.GetUpperBound(), float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		if math.IsInf(le, +1) {
			continue // the +Inf bucket is Count
		}
		if !finite(le) || !finite(c) {
			return false
		}
		s.Buckets = append(s.Buckets, [2]float64{le, c})
	}
	slices.SortFunc(s.Buckets, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	return true
}

func summary(s *record.Series, m *dto.Summary) bool {
	sum, count := m.GetSampleSum(), float64(m.GetSampleCount())
	if !finite(sum) {
		return false
	}
	s.Sum, s.Count = &sum, &count
	for _, q := range m.GetQuantile() {
		if v := q.GetValue(); finite(v) && finite(q.GetQuantile()) {
			s.Quantiles = append(s.Quantiles, [2]float64{q.GetQuantile(), v})
		}
	}
	return true
}
