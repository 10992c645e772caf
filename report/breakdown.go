package report

import (
	"fmt"

	"servebench/metrics"
)

// breakdownHead are the columns of a breakdown's table after its key's: the figures of a
// group that tell one group from another.
var breakdownHead = []string{"share", "completed", "failed", "req/s", "out tok/s",
	"TTFT p50", "TTFT p99", "TPOT p50", "ITL p50", "E2E p50", "E2E p99"}

// breakdownSection is the one section kind of every breakdown ("the summary grouped by
// KEY"): a line counting the groups, a table of one row per group, and in JSON a list of one
// object per group under the key's plural, with the run's key names.
func breakdownSection(b metrics.Breakdown) *Section {
	k := b.Key
	title := k.Title
	if title == "" {
		title = k.Plural
	}
	t := &Table{Head: append([]string{k.Name}, breakdownHead...), Note: k.Note}
	var list []*object
	for _, g := range b.Groups {
		m := g.Summary
		t.Rows = append(t.Rows, []string{g.Value, fmt.Sprintf("%.1f%%", fin(100*g.Share)), fmt.Sprint(m.Completed), fmt.Sprint(m.Failed),
			optf(m.RequestThroughput, 2), optf(m.OutputThroughput, 1),
			msP(m.TTFT, 50), msP(m.TTFT, 99), msP(m.TPOT, 50), msP(m.ITLChunk, 50), msP(m.E2E, 50), msP(m.E2E, 99)})
		list = append(list, groupObject(k.Name, g))
	}
	return &Section{Name: k.Plural, Title: title,
		Lines:  []Line{{Label: k.Plural, Text: fmt.Sprintf("%d %s", len(b.Groups), title)}},
		Tables: []*Table{t},
		JSON:   []Field{{k.Plural, list}}}
}

// groupObject is one group in JSON: its key's value, its share, and its figures under the
// run's key names (vLLM's where vLLM has the figure).
func groupObject(key string, g metrics.Group) *object {
	m := g.Summary
	o := &object{}
	o.set(key, g.Value)
	o.set("share", g.Share)
	o.set("measured", m.Measured)
	o.set("completed", m.Completed)
	o.set("failed", m.Failed)
	o.set("total_input_tokens", m.InputTokens)
	o.set("total_output_tokens", m.OutputTokens)
	o.set("request_throughput", m.RequestThroughput)
	o.set("output_throughput", m.OutputThroughput)
	for _, st := range []struct {
		name string
		st   metrics.Stat
	}{{"ttft", m.TTFT}, {"tpot", m.TPOT}, {"itl", m.ITLChunk}, {"e2el", m.E2E}} {
		statKeys(o, st.name, "_ms", st.st, []float64{90, 99}, 1e6)
	}
	return o
}
