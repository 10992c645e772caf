package record

import (
	"encoding/json"
	"fmt"
)

// TelemetryVersion is the version of the telemetry line written by this package. A reader
// skips telemetry lines of a newer version (they are samples it cannot read, not damage), so
// the line can grow without a new records schema.
const TelemetryVersion = 1

// Telemetry is one scrape of a server's Prometheus endpoint during a run: the server's own
// view (its queue, its KV cache, its histograms) beside the client's records. It is a raw
// observation, like a Record: the figures over the measurement window are computed by package
// metrics. Readers that predate it skip the line as invalid; this package's Reader hands it
// to Header.Telemetry instead of returning it as a record.
//
// A run's samples are written together just before its RunEnd line, not as they are taken:
// the records writer belongs to one goroutine (the sink), and a scrape must never wait for
// it. A crash during a run therefore loses that run's telemetry, never its records.
type Telemetry struct {
	V   int `json:"v"`             // TelemetryVersion
	Run int `json:"run,omitempty"` // the Record.Run it belongs to
	// T is when the response's headers arrived, ns since t0 on the monotonic clock, like
	// every time of a Record. The first sample of the first run is taken before t0 (before
	// any request), so T may be negative.
	T int64 `json:"t"`
	// Dur is how long the scrape took, request to the end of the body, ns.
	Dur    int64  `json:"dur,omitempty"`
	Source string `json:"source"` // the scraped URL, credentials removed
	OK     bool   `json:"ok"`
	// Error says why a scrape failed ("timeout", "http 500", "parse: ...", "body over
	// 33554432 bytes"); a failed scrape has no series.
	Error string `json:"error,omitempty"`
	Bytes int64  `json:"bytes,omitempty"` // body bytes read
	// Cut counts sample lines dropped because the scrape had already kept its cap of series
	// (or because one line was longer than the line cap): the figures of a cut scrape are
	// partial.
	Cut int `json:"cut,omitempty"`
	// NonFinite counts samples dropped because their value was NaN or infinite (JSON has no
	// such numbers, and no window figure means anything with them).
	NonFinite int `json:"nonfinite,omitempty"`
	// Thinned counts earlier successful samples of this source that were dropped to keep the
	// scraper's buffer within its memory bound (every other one, oldest first): the
	// effective interval before this sample was longer.
	Thinned int      `json:"thinned,omitempty"`
	Series  []Series `json:"series,omitempty"`
}

// Series is one Prometheus series of a scrape (a histogram or summary with all its lines).
type Series struct {
	Name   string            `json:"name"` // the metric family, e.g. vllm:num_requests_waiting
	Labels map[string]string `json:"labels,omitempty"`
	// Type is gauge, counter, histogram, summary or untyped.
	Type string `json:"type"`
	// Value is a gauge's, counter's or untyped sample's value; nil for histograms and summaries.
	Value *float64 `json:"value,omitempty"`
	// Buckets are a histogram's cumulative counts as [le, count] pairs, le ascending; the +Inf
	// bucket is Count.
	Buckets [][2]float64 `json:"buckets,omitempty"`
	// Quantiles are a summary's [quantile, value] pairs.
	Quantiles [][2]float64 `json:"quantiles,omitempty"`
	Sum       *float64     `json:"sum,omitempty"`
	Count     *float64     `json:"count,omitempty"`
}

// Telemetry types of Series.Type.
const (
	TypeGauge     = "gauge"
	TypeCounter   = "counter"
	TypeHistogram = "histogram"
	TypeSummary   = "summary"
	TypeUntyped   = "untyped"
)

// telemetryLine wraps a Telemetry so that a reader tells it from a record at a glance.
type telemetryLine struct {
	T *Telemetry `json:"servebench_telemetry"`
}

// telemetryPrefix starts every telemetry line (the encoder writes no space after the brace).
const telemetryPrefix = `{"servebench_telemetry":`

// WriteTelemetry writes one telemetry line.
func (w *Writer) WriteTelemetry(t *Telemetry) error {
	if t.V == 0 {
		t.V = TelemetryVersion
	}
	return w.encode(telemetryLine{t})
}

// readTelemetry decodes a telemetry line into the header's list; a line of a newer version
// is skipped.
func (r *Reader) readTelemetry(b []byte) error {
	var tl telemetryLine
	if err := json.Unmarshal(b, &tl); err != nil || tl.T == nil {
		return &LineError{Line: r.line, Err: fmt.Errorf("telemetry: %v", errOr(err))}
	}
	if tl.T.V <= TelemetryVersion {
		r.hdr.Telemetry = append(r.hdr.Telemetry, *tl.T)
	}
	return nil
}

// GPUSource is the Source of the GPU samples (nvidia-smi's, see package telemetry): each
// sample is one reading of every GPU, as gauge series with a gpu label (its index), so that
// they share the scrapes' line kind and every reader of telemetry reads them.
const GPUSource = "nvidia-smi"

// The GPU gauge series, in base units.
const (
	GPUPower       = "gpu_power_watts"
	GPUSMClock     = "gpu_sm_clock_hertz"
	GPUUtilization = "gpu_utilization_ratio" // 0 to 1
	GPUMemoryUsed  = "gpu_memory_used_bytes"
	GPUTemperature = "gpu_temperature_celsius"
	// GPUEnergy is the GPU's cumulative energy counter, J (a counter: its difference over a
	// window is the window's energy exactly).
	GPUEnergy = "gpu_energy_joules"
	// GPUClockEventReasons is the driver's bitmask of why the clocks are below their
	// maximum (nvidia-smi clocks_event_reasons.active, DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
	GPUClockEventReasons = "gpu_clock_event_reasons"
)

// ServerPlacement is the condition key saying where the server runs: the UUIDs of the GPUs
// its processes hold memory on (comma-separated, sorted) or PlacementCPU. It lives here
// because package metrics reads it from the header to charge energy only to those GPUs.
const ServerPlacement = "server.placement"

// PlacementCPU is ServerPlacement's value for a server that holds memory on no GPU.
const PlacementCPU = "cpu"

// ObservedServerProcess is the observation naming the process found listening on the
// server's port ("1234 llama-server"), kept so a note can name it.
const ObservedServerProcess = "observed.server_process"
