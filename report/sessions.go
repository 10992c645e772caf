package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// A multi-turn run has a section of its figures per turn index (the TTFT that shows whether
// the server reuses the history it has seen) and per session.
func init() { RegisterSection("sessions", 10, sessionsSection) }

// sessionsSection is nothing for a run without sessions.
func sessionsSection(_ *record.Header, s *metrics.Summary) *Section {
	if len(s.Turns) == 0 || s.Sessions == nil {
		return nil
	}
	ss := s.Sessions
	t := &Table{Head: []string{"turn", "n", "input tokens", "TTFT p50", "TTFT p99", "cached"},
		Note: "TTFT in ms, per turn index: the prompt grows with the history; with a prefix cache TTFT stays flat, or falls when turn 1 is the longest, and without one it rises"}
	var turns []*object
	for _, tu := range s.Turns {
		cached := dash
		if tu.CachedShare != nil {
			cached = fmt.Sprintf("%.0f%%", fin(100**tu.CachedShare))
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(tu.Turn), fmt.Sprint(tu.N), fmt.Sprintf("%.0f", fin(tu.InputTokens)),
			msP(tu.TTFT, 50), msP(tu.TTFT, 99), cached})
		to := &object{}
		to.set("turn", tu.Turn)
		to.set("completed", tu.N)
		to.set("mean_input_tokens", tu.InputTokens)
		statKeys(to, "ttft", "_ms", tu.TTFT, []float64{99}, 1e6)
		to.set("cached_share", tu.CachedShare)
		turns = append(turns, to)
	}
	so := &object{}
	so.set("started", ss.Started)
	so.set("completed", ss.Completed)
	statKeys(so, "duration", "_s", ss.Duration, []float64{99}, 1e9)
	return &Section{Name: "sessions", Title: "Sessions",
		Lines: []Line{{"sessions", fmt.Sprintf("%d started, %d complete; %s turns per session (p50); duration p50 %s, p99 %s s",
			ss.Started, ss.Completed, fmt.Sprintf("%.0f", fin(ss.Turns.Median)), percentileIn(ss.Duration, 50, 1e9), percentileIn(ss.Duration, 99, 1e9))}},
		Tables: []*Table{t},
		JSON:   []Field{{"turns", turns}, {"sessions", so}}}
}

// testedSeries names the series that were (or were not) tested, e.g. "ttft, itl".
func testedSeries(st *metrics.Steadiness, tested bool) string {
	var names []string
	for _, c := range st.Series {
		if c.Tested == tested {
			names = append(names, c.Metric)
		}
	}
	return strings.Join(names, ", ")
}

// untested is "; not tested: x, y (too few windows)" when some series were not tested.
func untested(st *metrics.Steadiness) string {
	if n := testedSeries(st, false); n != "" {
		return "; not tested (too few windows): " + n
	}
	return ""
}
