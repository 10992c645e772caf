package record

// RunEnd is a line written after the last record of one run (a sweep writes one per point):
// what the run was, why sending stopped, and how well the client itself kept time. It is
// known only at the end, so it cannot live in the header. Readers that predate it skip the
// line as invalid; this package's Reader hands it to Header.Ends instead of returning it as
// a record.
type RunEnd struct {
	Run int `json:"run"` // the Record.Run it closes
	// Label names the run, e.g. "concurrency 8" or "rate 12.5 req/s" in a sweep.
	Label string `json:"label,omitempty"`
	// Concurrency and Rate are the point's load (closed-loop users, open-loop req/s).
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	// Stop says why sending stopped: "requests", "duration", "schedule" (a trace or pacer
	// ran out), "max-errors", "max-error-rate", "interrupted" or "sink".
	Stop string `json:"stop,omitempty"`
	// StopDetail explains a stop rule that fired, e.g. "12 errors ≥ --max-errors 10".
	StopDetail string `json:"stop_detail,omitempty"`
	// Unsent counts open-loop arrivals that were due at least 10 ms before sending stopped
	// but were never dispatched (every --max-concurrency slot was busy, or the sender was
	// behind): they have no records, so without this count their waits would vanish from the
	// run. Counted up to 1,048,576.
	Unsent int `json:"unsent,omitempty"`
	// Held, in a replay of a trace with sessions (servebench capture's session_id), is how its
	// later turns waited for the turns before them: a turn is sent at its arrival or, when the
	// previous turn of its session has not ended by then, the recorded gap after that end. A
	// held turn's scheduled time is when it was released, so the lateness figures are the
	// sender's own. nil for any other run.
	Held *Held `json:"held,omitempty"`
	// CancelledBy says what cancelled the requests still in flight when the run ended:
	// "grace" (the grace period after the stop ran out) or "second-stop" (a second Ctrl-C or
	// SIGTERM, which cancels at once); empty when nothing did.
	CancelledBy string `json:"cancelled_by,omitempty"`
	// WarmupRequests and WarmupStop, with --warmup auto: how many warmup requests the run
	// sent, and why warming stopped: "converged", "max requests" or "max time" (caps: the
	// server may not have been warm), or "not reached" (the run ended while warming).
	WarmupRequests int    `json:"warmup_requests,omitempty"`
	WarmupStop     string `json:"warmup_stop,omitempty"`
	// Quality is the load generator's own health during the run.
	Quality *Quality `json:"quality,omitempty"`
	// RepeatAuto, on the last run of a --repeat auto file, says why repeating stopped and how
	// well the runs pinned the key metrics down.
	RepeatAuto *RepeatAuto `json:"repeat_auto,omitempty"`
	// Validity is the run held to validity rules (run --valid, --slo NAME=D@pNN): nil when
	// no rule was given.
	Validity *Validity `json:"validity,omitempty"`
}

// RepeatAuto is how a --repeat auto file ended.
type RepeatAuto struct {
	// Stop is "converged" (every key metric's run-to-run interval within Target) or "cap"
	// (Max runs made without that: the baseline is less certain than asked).
	Stop   string  `json:"stop"`
	Runs   int     `json:"runs"`
	Max    int     `json:"max"`
	Target float64 `json:"target"` // the half-width asked for, a share (0.05)
	// Widths are each key metric's 95% interval half-width over the runs, as a share of its
	// geometric mean (null: not defined in two runs).
	Widths map[string]*float64 `json:"widths"`
}

// Verdicts of Validity.
const (
	Valid   = "VALID"
	Invalid = "INVALID"
)

// Validity is a run's verdict under validity rules in the manner of MLPerf LoadGen: VALID
// when every check passed, else INVALID.
type Validity struct {
	Verdict string `json:"verdict"`
	// Rules names the rule set: a preset (e.g. "mlperf-llama3.1-8b-server") or "custom".
	Rules  string          `json:"rules"`
	Checks []ValidityCheck `json:"checks"`
}

// ValidityCheck is one rule's figure and, when it failed, what would make it pass.
type ValidityCheck struct {
	// Rule is the rule in words: "min duration 600s", "p99 TTFT ≤ 2s (early stopping)".
	Rule string `json:"rule"`
	Pass bool   `json:"pass"`
	// Figure is what the run showed: "312.4 s to the last scheduled query", "0 of 300 over
	// the limit; nearest-rank p99 812 ms".
	Figure string `json:"figure"`
	// Shortfall, on a failed check, says what to change: "needs 159 more requests at this
	// over-limit count", "run 288 s longer", "reduce the load".
	Shortfall string `json:"shortfall,omitempty"`
	// Measured, Over and Needed are an early-stopping check's counts: requests judged,
	// those over the limit, and the fewest requests that would pass at that over count.
	Measured int `json:"measured,omitempty"`
	Over     int `json:"over,omitempty"`
	Needed   int `json:"needed,omitempty"`
}

// Quality is how well the client could keep time during a run: the Go scheduler's latency
// (runtime/metrics /sched/latencies:seconds: how long runnable goroutines waited for a
// thread) and the process's CPU use. High values mean timestamps may include our own delays.
type Quality struct {
	// SchedP50, SchedP99, SchedMax are scheduling latencies in ns over the run (bucket upper
	// bounds of the runtime's histogram, so they round up).
	SchedP50 float64 `json:"sched_p50_ns"`
	SchedP99 float64 `json:"sched_p99_ns"`
	SchedMax float64 `json:"sched_max_ns"`
	// CPUMean and CPUMax are the process's CPU time per second of wall time, as a share of
	// the cores it may use (GOMAXPROCS): 1 is saturated. CPUMax is the busiest 1 s sample.
	CPUMean float64 `json:"cpu_mean"`
	CPUMax  float64 `json:"cpu_max"`
	Cores   int     `json:"cores"`
	// InProcessServer is true when the measured server (the built-in simulator) ran in the
	// same process, so the CPU figures include it.
	InProcessServer bool `json:"in_process_server,omitempty"`
	// Stamps and ReadStamps, with the kernel arrival clock (run --arrival-clock kernel): how
	// many measured content events were stamped (warmup's are not counted: it absorbs the
	// kernel turning timestamps on), and how many of them at the read because the read
	// carried no kernel receive time (timestamps were just being turned on for the machine,
	// or the connection is proxied or not TCP). Zero with the read clock.
	Stamps     int64 `json:"stamps,omitempty"`
	ReadStamps int64 `json:"read_stamps,omitempty"`
	// Sends and WriteSends, with the kernel send clock (run --send-clock kernel): how many
	// measured requests were stamped sent, and how many of them at the write hook because the
	// kernel reported no transmit time for their last write (not TCP, HTTP/2, or the
	// connection stopped asking). Zero with the write clock.
	Sends      int64 `json:"sends,omitempty"`
	WriteSends int64 `json:"write_sends,omitempty"`
	// Windows are the load generator's health per sampling interval (1 s) of the run, in
	// time order: what tells a window in which the client was disturbed from one in which
	// the server changed (metrics' steady check leaves the disturbed ones out). Absent in
	// files written before it was recorded, which still read.
	Windows []HealthWindow `json:"windows,omitempty"`
}

// HealthWindow is the load generator's health over one sampling interval.
type HealthWindow struct {
	// End is the interval's end in ns since t0; Span its length in ns.
	End  int64 `json:"t"`
	Span int64 `json:"span_ns"`
	// SchedP99 and SchedMax are the Go scheduler's latency in the interval, ns (bucket upper
	// bounds of the runtime's histogram): how long a runnable goroutine, a sender among
	// them, waited for a CPU.
	SchedP99 float64 `json:"sched_p99_ns"`
	SchedMax float64 `json:"sched_max_ns"`
	// TickLate is how late the sampler's own timer fired, ns: the process's wake-up delay.
	TickLate int64 `json:"tick_late_ns"`
	// CPU is the process's CPU time per wall time as a share of the cores it may use.
	CPU float64 `json:"cpu"`
	// Load1 is the machine's 1-minute load average at the interval's end and Steal the
	// share of the machine's CPU time the hypervisor took in it, both from /proc (Linux);
	// HasProc is false where they could not be read.
	Load1   float64 `json:"load1"`
	Steal   float64 `json:"steal"`
	HasProc bool    `json:"proc"`
}

// runEndLine wraps a RunEnd so that a reader tells it from a record at a glance.
type runEndLine struct {
	End *RunEnd `json:"servebench_run_end"`
}

// WriteRunEnd writes a run-end line, after the run's last record.
func (w *Writer) WriteRunEnd(e *RunEnd) error { return w.encode(runEndLine{e}) }

// runEndPrefix starts every run-end line (the encoder writes no space after the brace).
const runEndPrefix = `{"servebench_run_end":`

// Held is how a replay's later turns of a session waited for the turns before them (RunEnd.Held).
type Held struct {
	// Turns is the later turns of a session the run took; Held how many of them were held past
	// their arrival; Lost how many were never sent (sending stopped while they waited; also
	// counted in RunEnd.Unsent).
	Turns int `json:"turns"`
	Held  int `json:"held"`
	Lost  int `json:"lost,omitempty"`
	// TotalMS and MaxMS are the held turns' holds, summed and the longest, in milliseconds.
	TotalMS float64 `json:"total_ms"`
	MaxMS   float64 `json:"max_ms"`
}
