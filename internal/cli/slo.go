package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// parseSLOs reads --slo values "ttft=500ms", "tpot=50ms", "itl=…", "e2e=…" (repeatable; a
// value may also list several, comma-separated).
func parseSLOs(vals []string) (metrics.SLO, error) {
	var s metrics.SLO
	for _, v := range vals {
		for _, kv := range strings.Split(v, ",") {
			k, d, ok := strings.Cut(strings.TrimSpace(kv), "=")
			dur, err := time.ParseDuration(strings.TrimSpace(d))
			if !ok || err != nil || dur <= 0 {
				return s, usageErr("--slo %q: want NAME=DURATION with NAME ttft, tpot, itl or e2e, e.g. ttft=500ms", kv)
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
			default:
				return s, usageErr("--slo %q: unknown objective %q (want ttft, tpot, itl or e2e)", kv, k)
			}
		}
	}
	return s, nil
}

// parsePercent reads "99%", "99.5%" or a fraction "0.995" as a share in [0, 1].
func parsePercent(flag, s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if pct || v > 1 {
		v /= 100
	}
	if err != nil || v < 0 || v > 1 {
		return 0, usageErr("%s %q: want a percentage such as 99%% or a fraction such as 0.99", flag, s)
	}
	return v, nil
}

// headerOptions are the metrics options a records file asks for: its SLOs, its steady-state
// window and its concurrency cap, from the run configuration in its header. run and report
// both use it, so the summary of a file is the same whoever computes it.
func headerOptions(h *record.Header) metrics.Options {
	var o metrics.Options
	if h == nil || h.Config == nil {
		return o
	}
	cfg := h.Config
	num := func(k string) float64 { v, _ := cfg[k].(float64); return v }
	if list, ok := cfg["slo"].([]any); ok {
		var vals []string
		for _, v := range list {
			if s, ok := v.(string); ok {
				vals = append(vals, s)
			}
		}
		o.SLO, _ = parseSLOs(vals) // validated when the run started
	}
	if w, c := num("warmup_duration"), num("cooldown_duration"); w > 0 || c > 0 {
		o.Window = time.Duration(num("duration") - w - c)
	}
	o.MaxConcurrency = int(num("max_concurrency"))
	return o
}

// sloGate applies --fail-below: an error with exit code ExitSLO when the summary's SLO
// attainment is lower than the target (or undefined: no request could meet it).
func sloGate(failBelow string, s *metrics.Summary) (string, error) {
	if failBelow == "" {
		return "", nil
	}
	target, err := parsePercent("--fail-below", failBelow)
	if err != nil {
		return "", err
	}
	if s.SLOAttainment == nil {
		return "", codeErr(ExitSLO, fmt.Errorf("SLO gate failed: no measured request, so SLO attainment is undefined (--fail-below %s)", failBelow))
	}
	got := *s.SLOAttainment
	if got < target {
		return "", codeErr(ExitSLO, fmt.Errorf("SLO gate failed: attainment %.2f%% (%d of %d met %s) is below --fail-below %.2f%%",
			100*got, s.GoodRequests, s.Measured, s.SLO, 100*target))
	}
	return fmt.Sprintf("SLO gate passed: attainment %.2f%% ≥ %.2f%%", 100*got, 100*target), nil
}

// worstAttainment is the run with the lowest SLO attainment (the gate must hold for every run
// of a --repeat, not only the last one printed), or last when there is no other.
func worstAttainment(runs []runSummary, last *metrics.Summary) *metrics.Summary {
	worst := last
	for _, r := range runs {
		if r.sum == nil {
			continue
		}
		if r.sum.SLOAttainment == nil || (worst.SLOAttainment != nil && *r.sum.SLOAttainment < *worst.SLOAttainment) {
			worst = r.sum
		}
	}
	return worst
}
