package record

import (
	"encoding/json"
	"fmt"
)

// SweepEndVersion is the version of the sweep-end line written by this package. A reader
// skips sweep-end lines of a newer version (conclusions it cannot read, not damage).
const SweepEndVersion = 1

// SweepEnd is the line a sweep writes after its last point: what it concluded (the
// saturation knee, the point of maximum goodput, the highest load meeting the SLOs), so that
// `servebench report` of the file prints the same conclusions as `servebench sweep` did,
// even where they rest on the order of the search. Unlike a Record it holds derived figures:
// they are the sweep's decisions, recorded as made. Readers that predate it skip the line
// as invalid; this package's Reader hands it to Header.SweepEnd instead of returning it.
type SweepEnd struct {
	V int `json:"v"` // SweepEndVersion
	// Repeat is the number of runs per point (sweep --repeat).
	Repeat int `json:"repeat"`
	// Points are the sweep's loads in order of offered load (a closed loop's at its achieved
	// throughput; the maximum-throughput point of --auto last), each with its runs.
	Points []SweepPoint `json:"points"`
	// KneeShare defines the knee: the lightest point whose request throughput reaches this
	// share of PeakThroughput, the highest point's.
	KneeShare      float64     `json:"knee_share"`
	PeakThroughput *float64    `json:"peak_request_throughput"`
	Knee           *SweepPoint `json:"knee"`
	// SLO and TargetAttainment are the objectives (e.g. "TTFT ≤ 200ms, TPOT ≤ 10ms") and the
	// share of measured requests a point must meet them for (0..1); empty without --slo.
	SLO              string  `json:"slo,omitempty"`
	TargetAttainment float64 `json:"target_attainment,omitempty"`
	// MaxGoodput is the point of the highest goodput.
	MaxGoodput *SweepPoint `json:"max_goodput,omitempty"`
	// SLOLoad is the highest load whose every lighter tested point also met the SLOs; nil
	// when the lightest point missed them.
	SLOLoad *SweepPoint `json:"slo_load,omitempty"`
	// FirstMiss is the lightest point that missed the SLOs, and MetAbove the heavier points
	// that met them nonetheless: when MetAbove is not empty, attainment is not monotonic in
	// load (noise, a cache, a server that changed during the sweep), and a point that met
	// above a miss is not evidence that the load can be served.
	FirstMiss *SweepPoint  `json:"first_miss,omitempty"`
	MetAbove  []SweepPoint `json:"met_above,omitempty"`
	// Interrupted is true when the sweep stopped before its last point (Ctrl-C, an error).
	Interrupted bool `json:"interrupted,omitempty"`
	// Withheld, when set, says why the knee, peak, max goodput and SLO load are withheld
	// (all nil): a point its warnings invalidate (SweepPoint.Invalid), whose figures any of
	// them could rest on.
	Withheld string `json:"withheld,omitempty"`
	// Unordered, when set, says why the points of --auto cannot be ordered by load: its
	// maximum-throughput point completed clearly fewer requests per second than its
	// synchronous point, so the machine or the server changed between them. The sweep is
	// INVALID: Withheld says so too, and the conclusions are withheld.
	Unordered string `json:"unordered,omitempty"`
}

// SweepPoint is one load of a sweep and the figures its conclusions rest on. With --repeat,
// throughput and goodput are medians over the point's runs, and attainment is the lowest
// (a point meets the SLOs only when every one of its runs did).
type SweepPoint struct {
	Label       string  `json:"label"`
	Runs        []int   `json:"runs"`
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	// Offered is the point's load as a rate (req/s): its arrival rate, or for a closed loop
	// its achieved throughput (the rate its users offered).
	Offered           float64  `json:"offered_rate"`
	RequestThroughput *float64 `json:"request_throughput"`
	RequestGoodput    *float64 `json:"request_goodput,omitempty"`
	SLOAttainment     *float64 `json:"slo_attainment,omitempty"`
	// ServerThroughput is the server's own completion rate at the point, where its /metrics
	// were scraped: its generation counter's output tokens per second between its samples
	// inside the window (metrics.Server.GenerationRate) over the point's output tokens per
	// completed request; nil without two samples inside the window. Beside RequestThroughput
	// (completed over first sent → last done) it shows whether the window held the server's
	// rate.
	ServerThroughput *float64 `json:"server_request_throughput,omitempty"`
	// Invalid, when set, is why the point's warnings invalidate it (a run of it served its
	// prompts from the prefix cache, measured nothing, or failed every request).
	Invalid string `json:"invalid,omitempty"`
	// Poor says why the point's window did not hold its load (mostly ramp-in and drain; see
	// metrics.PointSummary.Poor); such a point is listed but no conclusion rests on it.
	Poor string `json:"poor,omitempty"`
}

// sweepEndLine wraps a SweepEnd so that a reader tells it from a record at a glance.
type sweepEndLine struct {
	End *SweepEnd `json:"servebench_sweep_end"`
}

// sweepEndPrefix starts every sweep-end line (the encoder writes no space after the brace).
const sweepEndPrefix = `{"servebench_sweep_end":`

// WriteSweepEnd writes the sweep-end line, after the last run's run-end line.
func (w *Writer) WriteSweepEnd(e *SweepEnd) error {
	if e.V == 0 {
		e.V = SweepEndVersion
	}
	return w.encode(sweepEndLine{e})
}

// readSweepEnd decodes a sweep-end line into the header; a line of a newer version is skipped.
func (r *Reader) readSweepEnd(b []byte) error {
	var el sweepEndLine
	if err := json.Unmarshal(b, &el); err != nil || el.End == nil {
		return &LineError{Line: r.line, Err: fmt.Errorf("sweep end: %v", errOr(err))}
	}
	if el.End.V > SweepEndVersion {
		return nil
	}
	if err := el.End.check(r.hdr.Ends); err != nil {
		return &RunError{Line: r.line, Err: fmt.Errorf("sweep end: %v", err)}
	}
	r.hdr.SweepEnd = el.End
	return nil
}

// check holds a sweep-end line to the file it ends: every run a point names has its run-end
// line before it (the sweep writes the line after its last run's), and no run is in two
// points or twice in one. A line that breaks this was not written by the sweep that wrote the
// runs (an edit, a corruption): trusted, it would pool runs of different loads as one point.
func (e *SweepEnd) check(ends []RunEnd) error {
	ended := make(map[int]bool, len(ends))
	for _, re := range ends {
		ended[re.Run] = true
	}
	owner := map[int]string{}
	for _, p := range e.Points {
		for _, k := range p.Runs {
			switch prev, seen := owner[k]; {
			case !ended[k]:
				return fmt.Errorf("point %.80q names run %d, which the file has no run-end line for", p.Label, k)
			case seen:
				return fmt.Errorf("run %d is in point %.80q and in point %.80q: a run is one load", k, prev, p.Label)
			}
			owner[k] = p.Label
		}
	}
	// the conclusions name points of the list: their runs are runs of the file too
	named := append([]SweepPoint{}, e.MetAbove...)
	for _, p := range []*SweepPoint{e.Knee, e.MaxGoodput, e.SLOLoad, e.FirstMiss} {
		if p != nil {
			named = append(named, *p)
		}
	}
	for _, p := range named {
		for _, k := range p.Runs {
			if _, ok := owner[k]; !ok {
				return fmt.Errorf("the conclusion %.80q names run %d, which no point holds", p.Label, k)
			}
		}
	}
	return nil
}
