package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"servebench/load"
	"servebench/record"
)

const selftestExamples = `  # the README table: as fast as possible, then 20 events/s per stream, at 1 to 4,096 streams
  servebench selftest

  # one point, paced like a 50 ms ITL server, as JSON
  servebench selftest --points 1024 --itl 50ms --json`

// selftestConfig is what `servebench selftest` measures.
type selftestConfig struct {
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
	// CPUProfile writes a pprof CPU profile of the client over every point (hidden flag: it is
	// how the hot path was tuned).
	CPUProfile string
}

func newSelftestCmd(std *streams) *cobra.Command {
	c := selftestConfig{Points: []int{1, 64, 256, 1024, 4096}, ITLs: []time.Duration{0, 50 * time.Millisecond},
		TTFT: 5 * time.Millisecond, Tokens: 48, Rounds: 2, ArrivalClock: "kernel"}
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure servebench's own overhead and timestamp accuracy against a simulator in a separate process",
		Long: `selftest starts the simulator in a separate process (so that servebench's own CPU is
measured apart from the server's), drives it through the real load path of servebench run at each
concurrency point, and reports per point: content events/s ingested, client CPU per event, and the
timestamp error (client arrival − simulator write time, from the simulator's truth log) p50/p99/max.`,
		Example: selftestExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			return runSelftest(cmd.Context(), std, &c)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&c.Points, "points", c.Points, "concurrent streams of each point")
	f.DurationSliceVar(&c.ITLs, "itl", c.ITLs, "simulator inter-token latency of each mode (0: as fast as it can)")
	f.DurationVar(&c.TTFT, "ttft", c.TTFT, "simulator time to first token")
	f.IntVar(&c.Tokens, "tokens", c.Tokens, "output tokens per request")
	f.IntVar(&c.Rounds, "rounds", c.Rounds, "measured requests per stream at each point (after one warmup request each)")
	f.BoolVar(&c.Sync, "sync", c.Sync, "no jitter: every stream emits at the same instants (default: ±ITL/2 jitter)")
	f.StringVar(&c.ArrivalClock, "arrival-clock", c.ArrivalClock, "how servebench stamps events, as in run: kernel (receive time) or read (when read)")
	f.BoolVar(&c.JSON, "json", c.JSON, "print the results as JSON instead of a table")
	f.StringVar(&c.Dir, "dir", c.Dir, "keep the records and truth files in this directory (default: a temporary one, removed)")
	f.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the client to this file")
	_ = f.MarkHidden("cpuprofile")
	return cmd
}

func (c *selftestConfig) validate() error {
	if len(c.Points) == 0 || len(c.ITLs) == 0 {
		return usageErr("--points and --itl need at least one value")
	}
	for _, p := range c.Points {
		if p < 1 {
			return usageErr("--points: %d is not a positive number of streams", p)
		}
	}
	for _, d := range c.ITLs {
		if d < 0 {
			return usageErr("--itl must not be negative")
		}
	}
	if c.Tokens < 2 || c.Rounds < 1 || c.TTFT <= 0 {
		return usageErr("--tokens must be at least 2, --rounds at least 1 and --ttft positive")
	}
	return nil
}

// selftestPoint is one row of the selftest: one concurrency at one simulator ITL.
type selftestPoint struct {
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
}

// runSelftest runs every ITL mode against its own simulator process and prints the rows.
func runSelftest(ctx context.Context, std *streams, c *selftestConfig) error {
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
	var rows []selftestPoint
	for i, itl := range c.ITLs {
		rs, err := selftestMode(ctx, std, c, itl, fmt.Sprintf("%s/mode%d", dir, i))
		rows = append(rows, rs...)
		if err != nil {
			return err
		}
	}
	if c.JSON {
		enc := json.NewEncoder(std.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"cores": runtime.GOMAXPROCS(0), "points": rows})
	}
	printSelftest(std.stdout, rows)
	return nil
}

// selftestMode starts a simulator process at one ITL and runs every point against it.
func selftestMode(ctx context.Context, std *streams, c *selftestConfig, itl time.Duration, prefix string) ([]selftestPoint, error) {
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
	b, err := selftestBench(ctx, std, c, child.url, prefix+"-records.jsonl")
	if err != nil {
		return nil, err
	}
	defer b.close()
	// streams held open: from dispatch to when the client was done with the request (its
	// records' done is the stream's end as the kernel received it, which can be earlier)
	held := make([][][2]int64, len(c.Points))
	var mu sync.Mutex
	b.finished = func(r *record.Record) {
		end := int64(time.Since(b.t0))
		mu.Lock()
		defer mu.Unlock()
		if r.Run >= 0 && r.Run < len(held) {
			held[r.Run] = append(held[r.Run], [2]int64{r.Dispatched, end})
		}
	}
	type span struct {
		cpu, wall time.Duration
	}
	spans := make([]span, len(c.Points))
	for i, n := range c.Points {
		lc := b.lc
		// one warmup request per stream first, as servebench run does by default
		lc.Concurrency, lc.Pacer, lc.Warmup, lc.Requests, lc.Duration = n, nil, n, n*c.Rounds, 0
		end := record.RunEnd{Run: i, Label: fmt.Sprintf("streams %d", n), Concurrency: n}
		runtime.GC() // the previous point's garbage is not this point's cost
		cpu0, wall0 := load.ProcessCPU(), time.Now()
		if _, err := b.runPoint(ctx, lc, end, end.Label); err != nil {
			return nil, err
		}
		spans[i] = span{load.ProcessCPU() - cpu0, time.Since(wall0)}
	}
	if err := b.out.Sync(); err != nil {
		return nil, fmt.Errorf("records file: %w", err)
	}
	if err := child.stop(); err != nil { // flushes the truth log
		return nil, err
	}
	rows, err := selftestRows(b.cfg.Output, truth, b.t0, c, itl)
	for i := range rows {
		rows[i].MaxInFlight = maxInFlight(held[i])
		rows[i].Held = rows[i].Failed == 0 && rows[i].MaxInFlight*100 >= rows[i].Streams*99
		rows[i].CPUPerEvent = float64(spans[i].cpu) / float64(max(rows[i].Events, 1))
		rows[i].CPUShare = spans[i].cpu.Seconds() / spans[i].wall.Seconds() / float64(runtime.GOMAXPROCS(0))
	}
	return rows, err
}

// selftestBench prepares a bench against url exactly as `servebench run` would, with a
// transport sized for the largest point.
func selftestBench(ctx context.Context, std *streams, c *selftestConfig, url, out string) (*bench, error) {
	cfg := defaultRunConfig()
	cfg.URL, cfg.Output, cfg.Quiet, cfg.Prewarm, cfg.ArrivalClock = url, out, true, true, c.ArrivalClock
	cfg.InputTokens, cfg.OutputTokens, cfg.NumPrompts = 16, c.Tokens, 64
	cfg.Concurrency, cfg.Requests, cfg.Warmup = slicesMax(c.Points), 1, 0
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := &bench{io: &streams{stdin: std.stdin, stdout: io.Discard, stderr: std.stderr}, cfg: &cfg}
	steps := []func() error{b.openOutput, func() error { return b.startTarget(ctx) }, b.prepareLoad,
		func() error { return b.buildWorkload(ctx) }, b.begin}
	for _, step := range steps {
		if err := step(); err != nil {
			b.close()
			return nil, err
		}
	}
	b.prog = newProgress(io.Discard, true)
	return b, nil
}

// printSelftest writes the rows as a table.
func printSelftest(w io.Writer, rows []selftestPoint) {
	fmt.Fprintf(w, "%-6s %8s %10s %5s %10s %11s %5s %9s %9s %9s\n",
		"itl", "streams", "in flight", "held", "events/s", "cpu/event", "cpu", "err p50", "err p99", "err max")
	for _, r := range rows {
		itl := "max"
		if r.ITL > 0 {
			itl = r.ITL.String()
		}
		held := "yes"
		if !r.Held {
			held = "NO"
		}
		fmt.Fprintf(w, "%-6s %8d %10d %5s %10.0f %9.2fµs %4.0f%% %7.2fms %7.2fms %7.2fms\n",
			itl, r.Streams, r.MaxInFlight, held, r.EventsPerSec, r.CPUPerEvent/1e3, 100*r.CPUShare, r.ErrP50Ms, r.ErrP99Ms, r.ErrMaxMs)
	}
	fmt.Fprintf(w, "(%d cores shared by servebench and the simulator process; error = client arrival − simulator write time)\n", runtime.GOMAXPROCS(0))
}
