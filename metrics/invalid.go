package metrics

import "strings"

// A run whose warnings invalidate a figure (level Invalidates: its TTFT measured cache hits,
// nothing was measured, every request failed, it ended while warming) is INVALID: its figures
// are printed, with the warning, but no conclusion rests on it. Its verdict block says
// INVALID, `run` exits with its own code, a sweep with such a point withholds its knee, peak
// and SLO load, and compare reads the same list to tell an invalid side.

// Invalidating is the warnings among ws that invalidate a figure, in order.
func Invalidating(ws []Warning) []Warning {
	var out []Warning
	for _, w := range ws {
		if w.Level == Invalidates {
			out = append(out, w)
		}
	}
	return out
}

// Invalid is the summary's invalidating warnings: the run is INVALID when there is one.
func (s *Summary) Invalid() []Warning {
	if s == nil {
		return nil
	}
	return Invalidating(s.Warnings)
}

// Reason is what the warning saw, in short: its text up to the first colon or full stop that
// ends a clause ("every measured request failed", "the server served 10240 of 10280 prompt
// tokens (100%) from its prefix cache").
func (w Warning) Reason() string {
	t := w.Text
	for _, sep := range []string{": ", ". "} {
		if i := strings.Index(t, sep); i > 0 {
			t = t[:i]
		}
	}
	return t
}
