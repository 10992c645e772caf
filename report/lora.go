package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"servebench/metrics"
)

// adapterHead is the per-adapter table's header: text, Markdown and HTML lay out the same
// cells (adapterCells).
var adapterHead = []string{"adapter", "share", "completed", "failed", "req/s", "out tok/s",
	"TTFT p50", "TTFT p99", "TPOT p50", "ITL p50", "E2E p50", "E2E p99"}

// adapterCells is one adapter's row; latencies in ms.
func adapterCells(a metrics.AdapterSummary) []string {
	return []string{a.Adapter, fmt.Sprintf("%.1f%%", fin(100*a.Share)), fmt.Sprint(a.Completed), fmt.Sprint(a.Failed),
		optFixed(a.RequestRate, 2), optFixed(a.OutputThroughput, 1),
		msP(a.TTFT, 50), msP(a.TTFT, 99), msP(a.TPOT, 50), msP(a.ITL, 50), msP(a.E2E, 50), msP(a.E2E, 99)}
}

func optFixed(v *float64, prec int) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%.*f", prec, fin(*v))
}

// adapterNote says what the table counts.
const adapterNote = "(per LoRA adapter, the request's model field; latencies in ms, ITL per event; throughputs over the run's whole window, so they add up to the run's)"

// textAdapters writes a LoRA mix's per-adapter table; nothing for other runs.
func textAdapters(b *strings.Builder, s *metrics.Summary) {
	if len(s.Adapters) == 0 {
		return
	}
	line(b, "adapters", "%d LoRA adapters", len(s.Adapters))
	tw := tabwriter.NewWriter(b, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(adapterHead, "\t")+"\t")
	for _, a := range s.Adapters {
		fmt.Fprintln(tw, strings.Join(adapterCells(a), "\t")+"\t")
	}
	tw.Flush()
	b.WriteString(adapterNote + "\n\n")
}

// jsonAdapters adds the per-adapter figures as "adapters", under the run's key names.
func jsonAdapters(o *object, s *metrics.Summary) {
	if len(s.Adapters) == 0 {
		return
	}
	var list []*object
	for _, a := range s.Adapters {
		ao := &object{}
		ao.set("adapter", a.Adapter)
		ao.set("share", a.Share)
		ao.set("measured", a.Measured)
		ao.set("completed", a.Completed)
		ao.set("failed", a.Failed)
		ao.set("total_input_tokens", a.InputTokens)
		ao.set("total_output_tokens", a.OutputTokens)
		ao.set("request_throughput", a.RequestRate)
		ao.set("output_throughput", a.OutputThroughput)
		for _, st := range []struct {
			name string
			st   metrics.Stat
		}{{"ttft", a.TTFT}, {"tpot", a.TPOT}, {"itl", a.ITL}, {"e2el", a.E2E}} {
			statKeys(ao, st.name, "_ms", st.st, []float64{90, 99}, 1e6)
		}
		list = append(list, ao)
	}
	o.set("adapters", list)
}

// adapterBlock is one run's per-adapter table in the HTML page.
type adapterBlock struct {
	Label, Class, Note string
	Head               []string
	Rows               [][]string
}

// adapterBlocks are the per-adapter tables of the runs that have them (not of a sweep,
// whose page has its per-point table instead).
func adapterBlocks(runs []Run) []adapterBlock {
	var out []adapterBlock
	for i, r := range runs {
		if r.Summary == nil || len(r.Summary.Adapters) == 0 || r.sweep != nil { // a sweep's last run is not the sweep
			continue
		}
		blk := adapterBlock{Label: r.Label, Class: fmt.Sprintf("c%d", i), Note: adapterNote, Head: adapterHead}
		for _, a := range r.Summary.Adapters {
			blk.Rows = append(blk.Rows, adapterCells(a))
		}
		out = append(out, blk)
	}
	return out
}

// mdAdapters writes the per-adapter table in Markdown; nothing for other runs.
func mdAdapters(b *strings.Builder, s *metrics.Summary) {
	if len(s.Adapters) == 0 {
		return
	}
	b.WriteString("\n## LoRA adapters\n\n| " + strings.Join(adapterHead, " | ") + " |\n|" + strings.Repeat("---|", len(adapterHead)) + "\n")
	for _, a := range s.Adapters {
		b.WriteString("| " + strings.Join(adapterCells(a), " | ") + " |\n")
	}
	b.WriteString("\n" + adapterNote + "\n")
}
