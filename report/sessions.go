package report

import (
	"fmt"
	"strconv"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// A multi-turn run has a section of its figures per turn index (metrics' "turn" breakdown:
// the TTFT that shows whether the server reuses the history it has seen) and per session. It
// is registered under the breakdown's plural, so it replaces the breakdown's generic table.
func init() { RegisterSection("turns", 10, sessionsSection) }

// sessionsSection is nothing for a run without sessions.
func sessionsSection(_ *record.Header, s *metrics.Summary) *Section {
	b := s.BreakdownBy("turn")
	if b == nil || s.Sessions == nil {
		return nil
	}
	ss := s.Sessions
	t := &Table{Head: []string{"turn", "n", "input tokens", "TTFT p50", "TTFT p99", "cached"},
		Note: "TTFT in ms, per turn index: the prompt grows with the history; with a prefix cache TTFT stays flat, or falls when turn 1 is the longest, and without one it rises"}
	var turns []*object
	for _, g := range b.Groups {
		m := g.Summary
		turn, _ := strconv.Atoi(g.Value)
		var in float64
		if m.Completed > 0 {
			in = float64(m.InputTokens) / float64(m.Completed)
		}
		cached := dash
		if m.CachedShare != nil {
			cached = fmt.Sprintf("%.0f%%", fin(100**m.CachedShare))
		}
		t.Rows = append(t.Rows, []string{g.Value, fmt.Sprint(m.Completed), fmt.Sprintf("%.0f", fin(in)),
			msP(m.TTFT, 50), msP(m.TTFT, 99), cached})
		to := &object{}
		to.set("turn", turn)
		to.set("completed", m.Completed)
		to.set("mean_input_tokens", in)
		statKeys(to, "ttft", "_ms", m.TTFT, []float64{99}, 1e6)
		to.set("cached_share", m.CachedShare)
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
