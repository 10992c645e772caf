package metrics

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"servebench/record"
)

// ParseSLOs reads --slo values "ttft=500ms", "tpot=50ms", "itl=…", "e2e=…" (each value may
// also list several, comma-separated). Every threshold must be a positive duration. A value
// written at a percentile, "ttft=2s@p99", is also a validity rule (package validity, which
// checks the percentile); for goodput its threshold counts as any other.
func ParseSLOs(vals []string) (SLO, error) {
	var s SLO
	for _, v := range vals {
		for _, kv := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(kv), "correct") { // answers.go
				s.Correct = true
				continue
			}
			k, d, ok := strings.Cut(strings.TrimSpace(kv), "=")
			d, _, _ = strings.Cut(d, "@")
			dur, err := time.ParseDuration(strings.TrimSpace(d))
			if !ok || err != nil || dur <= 0 {
				return s, fmt.Errorf("--slo %q: want NAME=DURATION with NAME ttft, tpot, itl, e2e or ttfo and a positive duration, e.g. ttft=500ms, or correct", kv)
			}
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "ttft":
				s.TTFT = dur
			case "tpot":
				s.TPOT = dur
			case "itl":
				s.ITL = dur
			case "e2e", "e2el":
				s.E2E = dur
			case "ttfo", "ttfat":
				s.TTFO = dur
			default:
				return s, fmt.Errorf("--slo %q: unknown objective %q (want ttft, tpot, itl, e2e or ttfo)", kv, k)
			}
		}
	}
	return s, nil
}

// ParseShare reads a share in [0, 1] written as a percentage ("99%", "99.5%") or as a
// fraction ("0.995"). A bare number above 1 is refused rather than guessed at: "1" is a
// fraction (100 %) and "1.5" could mean 1.5 % or 150 %, so it must carry its "%".
func ParseShare(name, s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("%s %q: want a percentage such as 99%% or a fraction in [0, 1] such as 0.99", name, s)
	}
	return v, nil
}

// HeaderOptions are the metrics options a records file asks for: its SLOs, its steady-state
// window and its concurrency cap, from the run configuration in its header. run, report and
// compare all use it, so the summary of a file is the same whoever computes it. An SLO in the
// header that does not parse is an error, never silently dropped.
func HeaderOptions(h *record.Header) (Options, error) {
	var o Options
	if h == nil || h.Config == nil {
		return o, nil
	}
	cfg := h.Config
	num := func(k string) float64 { v, _ := cfg[k].(float64); return v }
	if list, ok := cfg["slo"].([]any); ok {
		var vals []string
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				return o, fmt.Errorf("records header: slo %v is not a string", v)
			}
			vals = append(vals, s)
		}
		var err error
		if o.SLO, err = ParseSLOs(vals); err != nil {
			return o, fmt.Errorf("records header: %w", err)
		}
	}
	if w, c := num("warmup_duration"), num("cooldown_duration"); w > 0 || c > 0 {
		o.Window = time.Duration(num("duration") - w - c)
	}
	o.MaxConcurrency = int(num("max_concurrency"))
	return o, nil
}
