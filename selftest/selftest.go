// Package selftest measures servebench's own overhead and timestamp accuracy: it starts the
// simulator in a separate process (so that servebench's own CPU is measured apart from the
// server's), drives it through the real load path of servebench run at each concurrency
// point, and pairs every event the client stamped with the simulator's own write time from
// its truth log.
package selftest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"servebench/bench"
	"servebench/load"
	"servebench/record"
	"servebench/runspec"
)

// Config is what a selftest measures.
type Config struct {
	Points []int           // concurrent streams per point
	ITLs   []time.Duration // the simulator's ITL per mode; 0 = as fast as it can
	TTFT   time.Duration
	Tokens int // output tokens per request
	Rounds int // measured requests per stream per point, after one warmup request each
	JSON   bool
	// Sync makes every stream emit at the same instants (no jitter), like one engine step
	// for the whole batch; by default each delay is jittered by ±ITL/2 so that streams drift
	// apart, as requests arriving at different times do.
	Sync bool
	Dir  string // where the records and truth files go (default: a temporary directory)
	// ArrivalClock is run's --arrival-clock: kernel (the default) or read, to see the
	// client's own delay that the kernel's receive times leave out.
	ArrivalClock string
	// SendClock is run's --send-clock: kernel (the default) or write, to see the client's
	// own delay that the kernel's send times leave out of TTFT.
	SendClock string
	// CPUProfile writes a pprof CPU profile of the client over every point (how the hot path
	// was tuned).
	CPUProfile string
}

// Default is the README's selftest: as fast as possible, then 20 events/s per stream, at 1
// to 4,096 streams.
func Default() Config {
	return Config{Points: []int{1, 64, 256, 1024, 4096}, ITLs: []time.Duration{0, 50 * time.Millisecond},
		TTFT: 5 * time.Millisecond, Tokens: 48, Rounds: 2, ArrivalClock: "kernel", SendClock: "kernel"}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if len(c.Points) == 0 || len(c.ITLs) == 0 {
		return runspec.Usagef("--points and --itl need at least one value")
	}
	for _, p := range c.Points {
		if p < 1 {
			return runspec.Usagef("--points: %d is not a positive number of streams", p)
		}
	}
	for _, d := range c.ITLs {
		if d < 0 {
			return runspec.Usagef("--itl must not be negative")
		}
	}
	if c.Tokens < 2 || c.Rounds < 1 || c.TTFT <= 0 {
		return runspec.Usagef("--tokens must be at least 2, --rounds at least 1 and --ttft positive")
	}
	return nil
}

// Point is one row of the selftest: one concurrency at one simulator ITL.
type Point struct {
	ITL         time.Duration `json:"itl_ns"`
	Streams     int           `json:"streams"`
	Requests    int           `json:"requests"`
	Failed      int           `json:"failed"`
	MaxInFlight int           `json:"max_in_flight"`
	// Held is true when every request completed and at least 99% of Streams were in flight
	// at once: dispatched and not yet finished by the client. (99%: as fast as the simulator
	// goes, the first streams of a large point can finish before the last are dispatched.)
	Held         bool    `json:"held"`
	Events       int     `json:"events"`
	Seconds      float64 `json:"seconds"`        // first dispatch to last done
	EventsPerSec float64 `json:"events_per_sec"` // Events / Seconds
	// CPUPerEvent is the client process's CPU time (user + system, getrusage) during the point
	// divided by Events: reading, stamping, decoding, recording, writing and summarising.
	CPUPerEvent float64 `json:"cpu_ns_per_event"`
	CPUShare    float64 `json:"cpu_share"` // client CPU / (wall × cores)
	// Matched content events were paired with the simulator's truth log; the errors are
	// client arrival − simulator write time, in ms.
	Matched  int     `json:"matched"`
	ErrP50Ms float64 `json:"error_p50_ms"`
	ErrP99Ms float64 `json:"error_p99_ms"`
	ErrMaxMs float64 `json:"error_max_ms"`
	// EarlyMaxMs is how far the earliest paired client stamp preceded the simulator's clock
	// read just before it began writing that event (its write_began_ns), in ms; 0 when none
	// did. The bytes cannot arrive before their write begins, so anything beyond the clocks'
	// rounding is a client that stamped the wrong moment or an event paired with another's
	// truth. The errors above can be negative without that: the simulator stamps after its
	// write returns, and a busy machine may run the woken client first.
	EarlyMaxMs float64 `json:"early_max_ms"`
	// TTFTMatched requests were paired with the simulator's own TTFT: from when it read the
	// request's first bytes to when it wrote the first content event. The errors are client
	// TTFT (first content event − sent) − that, in ms.
	TTFTMatched  int     `json:"ttft_matched"`
	TTFTErrP50Ms float64 `json:"ttft_error_p50_ms"`
	TTFTErrP99Ms float64 `json:"ttft_error_p99_ms"`
	TTFTErrMaxMs float64 `json:"ttft_error_max_ms"`
	// TTFTWire... are the same against the simulator's TTFT from when the kernel received the
	// request's first bytes (Linux): the simulator's own delay in reading them is the
	// server's, part of the TTFT a client sees, and left out of the error.
	TTFTWireErrP50Ms float64 `json:"ttft_wire_error_p50_ms"`
	TTFTWireErrP99Ms float64 `json:"ttft_wire_error_p99_ms"`
	TTFTWireErrMaxMs float64 `json:"ttft_wire_error_max_ms"`
	// ITLErrP99Ms and ITLErrMaxMs are |client ITL − simulator ITL| over consecutive content
	// events of the paired requests, in ms.
	ITLErrP99Ms float64 `json:"itl_error_p99_ms"`
	ITLErrMaxMs float64 `json:"itl_error_max_ms"`
}

// Run runs every ITL mode against its own simulator process and prints the rows to stdout
// (progress lines go to stderr).
func Run(ctx context.Context, c *Config, stdout, stderr io.Writer) error {
	dir := c.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "servebench-selftest-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if c.CPUProfile != "" {
		pf, err := os.Create(c.CPUProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var rows []Point
	for i, itl := range c.ITLs {
		rs, err := mode(ctx, c, itl, fmt.Sprintf("%s/mode%d", dir, i))
		rows = append(rows, rs...)
		if err != nil {
			return err
		}
	}
	if c.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"cores": runtime.GOMAXPROCS(0), "points": rows})
	}
	Print(stdout, rows)
	return nil
}

// mode starts a simulator process at one ITL and runs every point against it.
func mode(ctx context.Context, c *Config, itl time.Duration, prefix string) ([]Point, error) {
	truth := prefix + "-truth.jsonl"
	jitter := itl / 2
	if c.Sync {
		jitter = 0
	}
	child, err := startSimProcess(ctx, []string{"--ttft", c.TTFT.String(), "--itl", itl.String(),
		"--jitter", jitter.String(), "--truth", truth})
	if err != nil {
		return nil, err
	}
	defer child.stop()
	// streams held open: from dispatch to when the client was done with the request (its
	// records' done is the stream's end as the kernel received it, which can be earlier)
	held := make([][][2]int64, len(c.Points))
	var mu sync.Mutex
	var t0 time.Time // set by Begin, before any request is sent
	finished := func(r *record.Record) {
		end := int64(time.Since(t0))
		mu.Lock()
		defer mu.Unlock()
		if r.Run >= 0 && r.Run < len(held) {
			held[r.Run] = append(held[r.Run], [2]int64{r.Dispatched, end})
		}
	}
	b, err := session(ctx, c, child.url, prefix+"-records.jsonl", finished)
	if err != nil {
		return nil, err
	}
	t0 = b.T0()
	type span struct {
		cpu, wall time.Duration
	}
	spans := make([]span, len(c.Points))
	for i, n := range c.Points {
		lc := b.Load()
		// one warmup request per stream first, as servebench run does by default
		lc.Concurrency, lc.Pacer, lc.Warmup, lc.Requests, lc.Duration = n, nil, n, n*c.Rounds, 0
		lc.NoWarmupDrain = true // the client's own capacity: every stream busy from the start
		end := record.RunEnd{Run: i, Label: fmt.Sprintf("streams %d", n), Concurrency: n}
		runtime.GC() // the previous point's garbage is not this point's cost
		cpu0, wall0 := load.ProcessCPU(), time.Now()
		if _, err := b.RunPoint(ctx, context.WithoutCancel(ctx), lc, end, end.Label); err != nil {
			b.Close()
			return nil, err
		}
		spans[i] = span{load.ProcessCPU() - cpu0, time.Since(wall0)}
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	if err := child.stop(); err != nil { // flushes the truth log
		return nil, err
	}
	rows, err := rowsOf(b.Output(), truth, t0, c, itl)
	for i := range rows {
		rows[i].MaxInFlight = maxInFlight(held[i])
		rows[i].Held = rows[i].Failed == 0 && rows[i].MaxInFlight*100 >= rows[i].Streams*99
		rows[i].CPUPerEvent = float64(spans[i].cpu) / float64(max(rows[i].Events, 1))
		rows[i].CPUShare = spans[i].cpu.Seconds() / spans[i].wall.Seconds() / float64(runtime.GOMAXPROCS(0))
	}
	return rows, err
}

// session prepares a records session against url exactly as `servebench run` would, with a
// transport sized for the largest point, and begins the file.
func session(ctx context.Context, c *Config, url, out string, finished func(*record.Record)) (*bench.Session, error) {
	s := runspec.Default()
	s.URL, s.Output, s.Quiet, s.Prewarm, s.ArrivalClock, s.SendClock = url, out, true, true, c.ArrivalClock, c.SendClock
	s.InputTokens, s.OutputTokens, s.NumPrompts = 16, c.Tokens, 64
	s.Concurrency, s.Requests, s.Warmup = slices.Max(c.Points), 1, 0
	s.MarkSet("warmup")
	if err := s.Validate(); err != nil {
		return nil, err
	}
	b, err := bench.Open(ctx, s.Resolve(), bench.Options{Finished: finished, Args: []string{"selftest"}})
	if err != nil {
		return nil, err
	}
	if err := b.Begin(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Print writes the rows as a table.
func Print(w io.Writer, rows []Point) {
	fmt.Fprintf(w, "%-6s %8s %10s %5s %10s %11s %5s %9s %9s %9s %9s %9s %9s %9s %9s\n",
		"itl", "streams", "in flight", "held", "events/s", "cpu/event", "cpu", "err p50", "err p99", "err max",
		"ttft p50", "ttft p99", "wire p50", "wire p99", "itl p99")
	for _, r := range rows {
		itl := "max"
		if r.ITL > 0 {
			itl = r.ITL.String()
		}
		held := "yes"
		if !r.Held {
			held = "NO"
		}
		fmt.Fprintf(w, "%-6s %8d %10d %5s %10.0f %9.2fµs %4.0f%% %7.2fms %7.2fms %7.2fms %7.2fms %7.2fms %7.2fms %7.2fms %7.2fms\n",
			itl, r.Streams, r.MaxInFlight, held, r.EventsPerSec, r.CPUPerEvent/1e3, 100*r.CPUShare, r.ErrP50Ms, r.ErrP99Ms, r.ErrMaxMs,
			r.TTFTErrP50Ms, r.TTFTErrP99Ms, r.TTFTWireErrP50Ms, r.TTFTWireErrP99Ms, r.ITLErrP99Ms)
	}
	fmt.Fprintf(w, "(%d cores shared by servebench and the simulator process; err = client arrival − simulator write time; "+
		"ttft = client TTFT − simulator first-byte-read to first-token-written; wire = the same from the kernel's receipt of the first byte; itl = |client ITL − simulator ITL|)\n", runtime.GOMAXPROCS(0))
}
