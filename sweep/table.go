package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"servebench/metrics"
)

// kneeShare defines the saturation knee: the lightest load whose request throughput reaches
// this share of the sweep's peak. Past it, more load buys little throughput and only adds
// latency (queueing); a fixed share is robust to the noise that defeats a slope test on a few
// points.
const kneeShare = 0.9

// printTable writes the sweep table (one row per point, by load) and names the saturation
// knee, the point of maximum goodput and, after a search, the highest load meeting the SLOs.
func (sw *sweeper) printTable(w io.Writer) {
	rows := sw.byLoad()
	slo := sw.b.Options().SLO
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	head := "run\tload\treq/s\tout tok/s\tTTFT p50\tTTFT p99\tTPOT p50\tTPOT p99\tE2E p99\tfailed\t"
	if slo.Any() {
		head += "goodput\tattain\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		s := r.sum
		line := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t", r.run, r.pt.label(),
			num(s.RequestThroughput, 2), num(s.OutputThroughput, 0), ms(s.TTFT, 50), ms(s.TTFT, 99),
			ms(s.TPOT, 50), ms(s.TPOT, 99), ms(s.E2E, 99), s.Failed)
		if slo.Any() {
			line += fmt.Sprintf("%s\t%s\t", num(s.RequestGoodput, 2), optPctCLI(s.SLOAttainment))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "latencies in ms; load is users (closed loop) or arrivals (open loop)")
	for _, n := range sw.findings(rows) {
		fmt.Fprintln(w, n)
	}
}

// findings are the named points under the table.
func (sw *sweeper) findings(rows []row) []string {
	var out []string
	if k, peak, ok := knee(rows); ok {
		out = append(out, fmt.Sprintf("saturation knee: run %d, %s (%.2f req/s, %.0f%% of the peak %.2f req/s)",
			rows[k].run, rows[k].pt.label(), deref(rows[k].sum.RequestThroughput), 100*deref(rows[k].sum.RequestThroughput)/peak, peak))
	}
	if !sw.b.Options().SLO.Any() {
		return out
	}
	best := -1
	for i, r := range rows {
		if r.sum.RequestGoodput != nil && (best < 0 || *r.sum.RequestGoodput > *rows[best].sum.RequestGoodput) {
			best = i
		}
	}
	if best >= 0 {
		out = append(out, fmt.Sprintf("max goodput: run %d, %s (%.2f req/s meeting %s)",
			rows[best].run, rows[best].pt.label(), *rows[best].sum.RequestGoodput, sw.b.Options().SLO))
	}
	target, _ := metrics.ParseShare("--target-attainment", sw.c.Target)
	out = append(out, highestMeeting(rows, target))
	return out
}

// knee returns the index of the lightest row reaching kneeShare of the peak throughput.
func knee(rows []row) (int, float64, bool) {
	peak := 0.0
	for _, r := range rows {
		peak = max(peak, deref(r.sum.RequestThroughput))
	}
	if peak <= 0 {
		return 0, 0, false
	}
	for i, r := range rows {
		if deref(r.sum.RequestThroughput) >= kneeShare*peak {
			return i, peak, true
		}
	}
	return 0, 0, false
}

// highestMeeting names the heaviest load whose SLO attainment met the target.
func highestMeeting(rows []row, target float64) string {
	best := -1
	for i, r := range rows {
		if meets(r.sum, target) {
			best = i
		}
	}
	if best < 0 {
		return fmt.Sprintf("no load met the SLOs with attainment ≥ %.4g%%", 100*target)
	}
	r := rows[best]
	return fmt.Sprintf("highest load meeting the SLOs (attainment ≥ %.4g%%): run %d, %s (%.2f req/s)",
		100*target, r.run, r.pt.label(), deref(r.sum.RequestThroughput))
}

func num(v *float64, prec int) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

func ms(s metrics.Stat, p float64) string {
	v, ok := s.Percentile(p)
	if !ok {
		return "—"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v/1e6), "0"), ".")
}

func optPctCLI(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100**v)
}
