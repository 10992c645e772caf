package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"servebench/compare"
	"servebench/metrics"
	"servebench/record"
)

// Extreme records: every format must print an undefined figure as null (JSON) or "—"
// (humans), never NaN, Inf or ∞, and every JSON it writes must parse (docs/design/METRICS.md: "figures that are not
// numbers").

// extremeCase is one records set a careless server, proxy or file can produce.
type extremeCase struct {
	name string
	recs []record.Record
}

// okRec is a completed measured request: sent at sent ns, its events at the given times.
func okRec(id int, sent int64, events ...int64) record.Record {
	r := record.Record{ID: id, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent,
		Headers: sent, PromptTokens: 16, PromptTokensSource: record.SourceServer, InputTokens: 16, MaxTokens: 8,
		OutputTokensSource: record.SourceServer, Status: 200}
	for _, t := range events {
		r.Events = append(r.Events, record.Event{T: t, N: 1})
	}
	r.OutputTokens = len(events)
	r.Done = sent
	if len(events) > 0 {
		r.FirstEvent = events[0]
		r.Done = events[len(events)-1]
	}
	return r
}

func extremeCases() []extremeCase {
	const ms = int64(1e6)
	var cs []extremeCase
	add := func(name string, recs ...record.Record) { cs = append(cs, extremeCase{name, recs}) }
	add("no records")
	add("one request", okRec(0, ms, 2*ms, 3*ms))
	add("one request, one event", okRec(0, ms, 2*ms))
	add("zero-length window", okRec(0, ms, ms, ms, ms))
	fail := func(id int) record.Record {
		r := okRec(id, int64(id+1)*ms)
		r.ErrorClass, r.Status, r.Error = record.ErrHTTP5xx, 503, "down"
		return r
	}
	add("all failed", fail(0), fail(1), fail(2))
	zero := okRec(0, ms)
	zero.OutputTokens = 0
	add("zero tokens", zero, okRec(1, 2*ms))
	warm := okRec(0, ms, 2*ms)
	warm.Phase = record.PhaseWarmup
	add("warmup only", warm)
	// a buffering proxy: every event of every request at one timestamp
	var proxy, gaps, half, back []record.Record
	for i := range 160 {
		proxy = append(proxy, okRec(i, ms, 5*ms, 5*ms, 5*ms, 5*ms))
		s := int64(i) * 10 * ms
		gaps = append(gaps, okRec(i, s, s+2*ms, s+2*ms, s+3*ms, s+3*ms))
		// coalesced events in the first half, spread ones after: a series whose median is 0
		if i < 110 {
			half = append(half, okRec(i, s, s+2*ms, s+2*ms, s+2*ms))
		} else {
			half = append(half, okRec(i, s, s+2*ms, s+12*ms, s+22*ms))
		}
		back = append(back, okRec(i, s, s-ms, s-2*ms)) // events before the send: a hostile file
	}
	add("coalesced events, one timestamp", proxy...)
	add("events with zero gaps", gaps...)
	add("coalesced first half", half...)
	add("events before sent", back...)
	return cs
}

// nonFinite matches what a non-finite float prints as in Go, JavaScript or maths. Tests
// scan with findNonFinite, which finds the same first match without the regexp machine (a
// tenth of this file's tests' time under -race went to it, over large HTML and OTLP pages);
// TestFindNonFiniteIsTheRegexp holds the two equal.
var nonFinite = regexp.MustCompile(`NaN|[+-]?Inf\b|Infinity|∞`)

// findNonFinite is nonFinite.Find with its index: the leftmost non-finite figure in b, or nil.
func findNonFinite(b []byte) (int, []byte) {
	at, end := -1, -1
	for _, tok := range []string{"NaN", "Inf", "∞"} {
		for off := 0; ; {
			i := bytes.Index(b[off:], []byte(tok))
			if i < 0 || at >= 0 && off+i >= at {
				break
			}
			i += off
			e := i + len(tok)
			if tok == "Inf" && e < len(b) && isWordByte(b[e]) {
				if !bytes.HasPrefix(b[i:], []byte("Infinity")) {
					off = i + 1
					continue
				}
				e = i + len("Infinity")
			} else if tok == "Inf" && i > 0 && (b[i-1] == '+' || b[i-1] == '-') {
				i--
			}
			at, end = i, e
			break
		}
	}
	if at < 0 {
		return -1, nil
	}
	return at, b[at:end]
}

// isWordByte is regexp's \w: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// checkFinite fails the test when out shows a non-finite figure, or (asJSON) is not JSON.
func checkFinite(t *testing.T, what string, out []byte, asJSON bool) {
	t.Helper()
	noNonFinite(t, what, out)
	if asJSON {
		validJSON(t, what, out)
	}
}

// noNonFinite fails the test when out shows a non-finite figure.
func noNonFinite(t *testing.T, what string, out []byte) {
	t.Helper()
	if i, m := findNonFinite(out); m != nil {
		t.Errorf("%s prints %q: …%s…", what, m, out[max(0, i-80):min(len(out), i+40)])
	}
}

// validJSON fails the test unless out is a sequence of JSON values (vllm writes one a line).
func validJSON(t *testing.T, what string, out []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Errorf("%s: not JSON: %v", what, err)
			return
		}
	}
}

// extremeInput is the records of c as one input, from a file as report reads it.
func extremeInput(t *testing.T, c extremeCase) Input {
	var b bytes.Buffer
	w := record.NewWriter(&b)
	if err := w.WriteHeader(header(false)); err != nil {
		t.Fatal(err)
	}
	for i := range c.recs {
		if err := w.Write(&c.recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return readerInput(t, "x.jsonl", &b)
}

// TestNoNonFiniteInAnyFormat renders every extreme case in every format.
func TestNoNonFiniteInAnyFormat(t *testing.T) {
	for _, c := range extremeCases() {
		for _, name := range Formats() {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				var out bytes.Buffer
				if err := Render(&out, name, extremeInput(t, c)); err != nil {
					t.Fatalf("render: %v", err)
				}
				checkFinite(t, name, out.Bytes(), name == "json" || name == "vllm")
			})
		}
		t.Run(c.name+"/compare", func(t *testing.T) {
			side := func() *compare.Side {
				s := compare.NewSide(header(false), metrics.Options{})
				for i := range c.recs {
					s.Add(&c.recs[i])
				}
				return s
			}
			res := compare.Compare(side(), side(), compare.Options{Goodput: true})
			for _, name := range CompareFormats() {
				var out bytes.Buffer
				if err := RenderCompare(&out, name, res, "a", "b"); err != nil {
					t.Fatalf("compare %s: %v", name, err)
				}
				checkFinite(t, "compare "+name, out.Bytes(), name == "json")
			}
		})
	}
}

// TestNonFiniteSummaryFigures: whatever non-finite figure a summary carries (a steady-state
// drift of +Inf, a NaN rate), every format of summaries prints it as null or "—".
func TestNonFiniteSummaryFigures(t *testing.T) {
	h := header(false)
	recs := extremeCases()[1].recs
	for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		s := summarise(h, metrics.Options{}, recs)
		s.Steadiness = &metrics.Steadiness{Tested: true, Windows: 8, Drifts: []metrics.Drift{
			{Metric: "itl", Direction: "rose", PerMinute: bad, Unit: "ms", Change: bad, P: 0.001}}}
		s.RequestThroughput, s.OutputThroughput, s.MeanConcurrency, s.AchievedRate = &bad, &bad, &bad, &bad
		s.SLOAttainment, s.FailureRate = &bad, bad
		runs := []metrics.RunSummary{{Run: 0, Summary: s}, {Run: 1, Label: "two", Summary: s}}
		for _, name := range []string{"text", "json", "md", "gobench"} {
			t.Run(fmt.Sprint(bad)+"/"+name, func(t *testing.T) {
				var out bytes.Buffer
				if err := Render(&out, name, Input{Header: h, Summaries: runs}); err != nil {
					t.Fatalf("render: %v", err)
				}
				checkFinite(t, name, out.Bytes(), name == "json")
			})
		}
	}
}

// TestCompareInfiniteInterval: an interval with an infinite or undefined end prints as "—".
func TestCompareInfiniteInterval(t *testing.T) {
	res := compare.Compare(fakeSide(1, 40, 10, 0), fakeSide(1, 40, 10, 0), compare.Options{})
	for i := range res.Rows {
		res.Rows[i].Base.Lo, res.Rows[i].Base.Hi = math.Inf(-1), math.Inf(1)
		res.Rows[i].Cand.Center, res.Rows[i].Cand.Hi = math.NaN(), math.NaN()
		res.Rows[i].Delta, res.Rows[i].P = math.Inf(1), math.NaN()
		res.Rows[i].Significant = true
	}
	for _, name := range CompareFormats() {
		var out bytes.Buffer
		if err := RenderCompare(&out, name, res, "a", "b"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkFinite(t, name, out.Bytes(), name == "json")
		if name == "text" && !strings.Contains(out.String(), "[—, —]") {
			t.Errorf("text: no [—, —] interval:\n%s", out.String())
		}
	}
}

// TestMarshalFinite: a value without a non-finite float is json.Marshal's bytes; one with
// them has null in their place, by encoding/json's field rules (tag names, "-", omitempty,
// embedded structs, map keys, Marshalers kept).
func TestMarshalFinite(t *testing.T) {
	type Inner struct {
		X float64 `json:"x"`
		Y float64 `json:"y,omitempty"`
	}
	type outer struct {
		Inner
		Name  string             `json:"name"`
		Skip  float64            `json:"-"`
		Ptr   *float64           `json:"ptr"`
		List  []float32          `json:"list"`
		Map   map[int]float64    `json:"map"`
		Rate  pyFloat            `json:"rate"`
		Nest  *Inner             `json:"nest,omitempty"`
		Any   any                `json:"any"`
		Names map[string]float64 `json:"names,omitempty"`
		lower float64
	}
	one := 1.5
	ok := outer{Inner: Inner{X: 1}, Name: "a", Ptr: &one, List: []float32{2}, Map: map[int]float64{3: 4}, Rate: 2, Any: 5.0, lower: math.NaN()}
	want, err := json.Marshal(ok)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := marshalFinite(ok); err != nil || string(got) != string(want) {
		t.Errorf("finite value: %s, %v; want %s", got, err, want)
	}
	nan, inf := math.NaN(), math.Inf(1)
	bad := outer{Inner: Inner{X: nan, Y: inf}, Name: "a", Skip: nan, Ptr: &inf, List: []float32{float32(inf), 2},
		Map: map[int]float64{3: nan}, Rate: pyFloat(nan), Nest: &Inner{X: -inf}, Any: nan}
	got, err := marshalFinite(bad)
	const exp = `{"x":null,"y":null,"name":"a","ptr":null,"list":[null,2],"map":{"3":null},"rate":null,"nest":{"x":null},"any":null}`
	if err != nil || string(got) != exp {
		t.Errorf("non-finite value: %s, %v; want %s", got, err, exp)
	}
}

// TestFinNoNegativeZero: a negative figure too small for the verb's precision prints as zero,
// with the verb's width and sign flag, and a real negative figure keeps its sign.
func TestFinNoNegativeZero(t *testing.T) {
	for _, c := range []struct {
		format string
		v      float64
		want   string
	}{
		{"%.2f", -0.004, "0.00"},
		{"%8.2f", -0.004, "    0.00"},
		{"%+.1f%%", -0.04, "+0.0%"},
		{"%.2f", -0.006, "-0.01"},
		{"%.2f", -12.5, "-12.50"},
		{"%.3g", -1e-9, "-1e-09"},
		{"%.2f", 0.004, "0.00"},
	} {
		if got := fmt.Sprintf(c.format, fin(c.v)); got != c.want {
			t.Errorf("Sprintf(%q, fin(%v)) = %q, want %q", c.format, c.v, got, c.want)
		}
	}
}

// TestFindNonFiniteIsTheRegexp: findNonFinite finds what nonFinite finds, where it finds it,
// over strings built of the pieces that matter (the words, signs, word and other bytes).
func TestFindNonFiniteIsTheRegexp(t *testing.T) {
	pieces := []string{"NaN", "Inf", "Infinity", "∞", "+", "-", "o", "_", "9", " ", "\"", "In", "Na", "f"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		for range rng.IntN(7) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		i, m := findNonFinite(b)
		want := nonFinite.FindIndex(b)
		if want == nil && m != nil || want != nil && (i != want[0] || !bytes.Equal(m, b[want[0]:want[1]])) {
			t.Fatalf("%q: found %d %q, the regexp %v", b, i, m, want)
		}
	}
}
