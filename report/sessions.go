package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"servebench/metrics"
)

// textSessions writes a multi-turn run's figures per turn index (the TTFT that shows whether
// the server reuses the history it has seen) and per session; nothing for other runs.
func textSessions(b *strings.Builder, s *metrics.Summary) {
	if len(s.Turns) == 0 || s.Sessions == nil {
		return
	}
	ss := s.Sessions
	line(b, "sessions", "%d started, %d complete; %s turns per session (p50); duration p50 %s, p99 %s s",
		ss.Started, ss.Completed, fmt.Sprintf("%.0f", fin(ss.Turns.Median)), percentileIn(ss.Duration, 50, 1e9), percentileIn(ss.Duration, 99, 1e9))
	tw := tabwriter.NewWriter(b, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "turn\tn\tinput tokens\tTTFT p50\tTTFT p99\tcached\t")
	for _, t := range s.Turns {
		cached := dash
		if t.CachedShare != nil {
			cached = fmt.Sprintf("%.0f%%", fin(100**t.CachedShare))
		}
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%s\t%s\t\n", t.Turn, t.N, fin(t.InputTokens), msP(t.TTFT, 50), msP(t.TTFT, 99), cached)
	}
	tw.Flush()
	b.WriteString("(TTFT in ms, per turn index: the prompt grows with the history; with a prefix cache TTFT stays flat, or falls when turn 1 is the longest, and without one it rises)\n\n")
}

// jsonSessions adds a multi-turn run's figures to the JSON summary.
func jsonSessions(o *object, s *metrics.Summary) {
	if len(s.Turns) == 0 {
		return
	}
	var turns []*object
	for _, t := range s.Turns {
		to := &object{}
		to.set("turn", t.Turn)
		to.set("completed", t.N)
		to.set("mean_input_tokens", t.InputTokens)
		statKeys(to, "ttft", "_ms", t.TTFT, []float64{99}, 1e6)
		to.set("cached_share", t.CachedShare)
		turns = append(turns, to)
	}
	o.set("turns", turns)
	so := &object{}
	so.set("started", s.Sessions.Started)
	so.set("completed", s.Sessions.Completed)
	statKeys(so, "duration", "_s", s.Sessions.Duration, []float64{99}, 1e9)
	o.set("sessions", so)
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
