package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"servebench/record"
)

// smiField is one --query-gpu field the sampler reads: the series it becomes and the scale
// to base units of a value printed without a unit.
type smiField struct {
	query, series string
	scale         float64
}

// basicFields are asked of an nvidia-smi whose --help-query-gpu says nothing (an old or
// unusual build): index, power (W), SM clock (MHz), utilisation (%), memory used (MiB),
// temperature (°C), without units, fields every driver since Kepler knows.
var basicFields = []smiField{{"index", "", 0}, {"power.draw", record.GPUPower, 1}, {"clocks.sm", record.GPUSMClock, 1e6},
	{"utilization.gpu", record.GPUUtilization, 0.01}, {"memory.used", record.GPUMemoryUsed, 1 << 20},
	{"temperature.gpu", record.GPUTemperature, 1}}

// chooseFields picks the query from the field names nvidia-smi --help-query-gpu lists (nil
// help: basicFields). Power is power.draw.average where the driver has it: the driver's own
// one-second mean, which integrates over a window better than the instantaneous
// power.draw.instant that Hopper's power.draw may be; the GPU's UUID labels each reading (so
// that energy is charged only to the GPUs the server holds memory on); an energy counter
// field, where the driver lists one, gives exact energy; the clock event reasons (named
// clocks_throttle_reasons before driver 535) say why clocks are low.
func chooseFields(help map[string]bool) []smiField {
	if help == nil {
		return basicFields
	}
	first := func(names ...string) string {
		for _, n := range names {
			if help[n] {
				return n
			}
		}
		return ""
	}
	out := []smiField{{"index", "", 0}}
	if help["uuid"] {
		out = append(out, smiField{"uuid", "", 0})
	}
	// both where the driver lists both: a GPU older than Ampere lists power.draw.average but
	// answers [N/A], and then power.draw is read (parseGPULine keeps the first that reads)
	if help["power.draw.average"] {
		out = append(out, smiField{"power.draw.average", record.GPUPower, 1})
	}
	out = append(out, smiField{"power.draw", record.GPUPower, 1})
	for _, n := range slices.Sorted(maps.Keys(help)) {
		if strings.Contains(n, "energy") {
			out = append(out, smiField{n, record.GPUEnergy, 0}) // a value without its unit is not read
			break
		}
	}
	out = append(out, basicFields[2:]...)
	if r := first("clocks_event_reasons.active", "clocks_throttle_reasons.active"); r != "" {
		out = append(out, smiField{r, record.GPUClockEventReasons, 1})
	}
	return out
}

// helpFieldRe finds the field names in nvidia-smi --help-query-gpu: each entry starts with
// its names in quotes, e.g. `"clocks.current.sm" or "clocks.sm"`.
var helpFieldRe = regexp.MustCompile(`"([a-z_.]+)"`)

// queryHelp lists the fields nvidia-smi at path can query; nil when it does not say.
func queryHelp(path string) map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--help-query-gpu")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	fields := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, `"`) {
			for _, m := range helpFieldRe.FindAllStringSubmatch(line, -1) {
				fields[m[1]] = true
			}
		}
	}
	if !fields["index"] {
		return nil
	}
	return fields
}

// Bounds of the GPU sampler.
const (
	// gpuRestarts is how often a dead nvidia-smi is started again in one run, an interval
	// after it died: a driver hiccup should not cost the run's energy, a broken install must
	// not become one process per sample.
	gpuRestarts = 3
	maxGPULine  = 4 << 10 // a longer line is no answer to our query: dropped
	stderrTail  = 512     // bytes of a dead process's stderr kept for its error
)

// gpuSampler runs one long-lived `nvidia-smi -lms` per run and turns its lines into samples.
// One process, not one per sample: nvidia-smi takes tens to hundreds of milliseconds to start
// (it initialises NVML), which would limit the interval and load the host we measure; with
// -lms it keeps NVML open and prints a reading every interval. Each line is stamped when its
// bytes are read from the pipe, on the run's monotonic clock, like an SSE event.
type gpuSampler struct {
	path     string
	interval time.Duration
	add      func(Sample)
	fields   []smiField // chosen at the first start (see chooseFields)
	units    bool       // the query asks for units (a driver that lists its fields)

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	pending *Sample         // the reading being assembled: one line per GPU
	seen    map[string]bool // GPU indices in pending
	first   chan struct{}   // closed at the first line of the run
	gotLine bool
	tick    chan struct{} // a line was read (buffered, never blocks)
}

// start starts sampling and waits (at most wait) for the first reading, so that the run's
// first sample precedes its first request.
func (g *gpuSampler) start(wait time.Duration) {
	if g.done != nil {
		return
	}
	if g.fields == nil {
		help := queryHelp(g.path)
		g.fields, g.units = chooseFields(help), help != nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel, g.done = cancel, make(chan struct{})
	g.first, g.gotLine, g.tick = make(chan struct{}), false, make(chan struct{}, 1)
	go g.run(ctx)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-g.first:
	case <-g.done: // failed to start, or died at once: already counted
	case <-t.C:
	}
}

// stop kills the process and buffers its last reading. With final (the run's last request
// done) it first waits, at most wait, for one more reading, so that the power samples span
// the whole window as the scrapes do: a reading from before the end would leave the window's
// last interval out of its energy.
func (g *gpuSampler) stop(final bool, wait time.Duration) {
	if g.done == nil {
		return
	}
	if final {
		select {
		case <-g.tick: // read before stop was called: not after the last request
		default:
		}
		t := time.NewTimer(wait)
		select {
		case <-g.tick:
			// the reading's first line: nvidia-smi prints the other GPUs' lines right after it
			time.Sleep(min(g.interval/2, 100*time.Millisecond))
		case <-g.done:
		case <-t.C:
		}
		t.Stop()
	}
	g.cancel()
	<-g.done
	g.done = nil
}

// run runs nvidia-smi until ctx ends, starting it again (at most gpuRestarts times) when it
// dies; each failure is a failed sample.
func (g *gpuSampler) run(ctx context.Context) {
	defer close(g.done)
	for restarts := 0; ; restarts++ {
		at := time.Now()
		err := g.once(ctx)
		g.flush()
		if ctx.Err() != nil {
			return // stopped: not a failure
		}
		g.add(Sample{At: time.Now(), Telemetry: record.Telemetry{Source: record.GPUSource,
			Dur: time.Since(at).Nanoseconds(), Error: errText(err)}})
		var start startError
		if errors.As(err, &start) || restarts >= gpuRestarts {
			return
		}
		t := time.NewTimer(g.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// startError is nvidia-smi failing to start: starting it again would fail again.
type startError struct{ error }

func (e startError) Unwrap() error { return e.error }

// once runs one nvidia-smi until it exits or ctx ends, and says why it exited.
func (g *gpuSampler) once(ctx context.Context) error {
	ms := max(g.interval.Milliseconds(), 1)
	format := "--format=csv,noheader,nounits"
	if g.units {
		format = "--format=csv,noheader" // the energy field's unit is read, never assumed
	}
	cmd := exec.CommandContext(ctx, g.path, "--query-gpu="+queryOf(g.fields), format, "-lms", strconv.FormatInt(ms, 10))
	// a child holding the pipe open must not hold Stop: a second after the kill the pipes close
	cmd.WaitDelay = time.Second
	lw := &lineWriter{line: g.line}
	var tail tailWriter
	cmd.Stdout, cmd.Stderr = lw, &tail
	if err := cmd.Start(); err != nil {
		return startError{fmt.Errorf("start: %w", err)}
	}
	err := cmd.Wait()
	msg := "exited"
	if err != nil {
		msg += ": " + err.Error()
	}
	if t := strings.TrimSpace(string(tail.b)); t != "" {
		msg += ": " + t
	}
	return errors.New(msg)
}

// line turns one line into the pending reading. A line of a GPU already in the pending
// reading starts the next one: nvidia-smi prints every GPU once per interval.
func (g *gpuSampler) line(b []byte, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.gotLine {
		g.gotLine = true
		close(g.first)
	}
	select {
	case g.tick <- struct{}{}:
	default:
	}
	series, idx, err := parseGPULine(g.fields, string(b))
	if err != nil {
		g.flushLocked()
		g.add(Sample{At: at, Telemetry: record.Telemetry{Source: record.GPUSource, Error: "parse: " + err.Error(), Bytes: int64(len(b))}})
		return
	}
	if g.pending != nil && g.seen[idx] {
		g.flushLocked()
	}
	if g.pending == nil {
		g.pending = &Sample{At: at, Telemetry: record.Telemetry{Source: record.GPUSource, OK: true}}
		g.seen = map[string]bool{}
	}
	g.seen[idx] = true
	g.pending.Bytes += int64(len(b))
	g.pending.Series = append(g.pending.Series, series...)
	g.pending.Dur = at.Sub(g.pending.At).Nanoseconds()
}

func (g *gpuSampler) flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.flushLocked()
}

func (g *gpuSampler) flushLocked() {
	if g.pending != nil {
		g.add(*g.pending)
		g.pending, g.seen = nil, nil
	}
}

// queryOf is the --query-gpu list of fields.
func queryOf(fields []smiField) string {
	q := make([]string, len(fields))
	for i, f := range fields {
		q[i] = f.query
	}
	return strings.Join(q, ",")
}

// parseGPULine reads one GPU's line of the fields' values, e.g. "0, 251.37, 1980, 87, 40213,
// 64" for basicFields or "0, GPU-5d1c…, 251.37 W, 1980 MHz, 87 %, 40213 MiB, 64,
// 0x0000000000000004" with units, as gauges in base units labelled with the index (and UUID;
// the power and energy series also with the field read, since power.draw and
// power.draw.average differ). A field nvidia-smi cannot read ("[N/A]", "[Not Supported]")
// is left out.
func parseGPULine(fields []smiField, line string) ([]record.Series, string, error) {
	f := strings.Split(strings.TrimSpace(line), ",")
	if len(f) != len(fields) {
		return nil, "", fmt.Errorf("%d fields, want %d: %.80q", len(f), len(fields), line)
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	if _, err := strconv.Atoi(f[0]); err != nil {
		return nil, "", fmt.Errorf("gpu index %.20q", f[0])
	}
	labels := map[string]string{"gpu": f[0]}
	if fields[1].query == "uuid" && strings.HasPrefix(f[1], "GPU-") {
		labels["uuid"] = f[1]
	}
	var out []record.Series
	power := false
	for i, m := range fields {
		if m.series == "" || (m.series == record.GPUPower && power) {
			continue
		}
		v, ok := smiValue(m, f[i])
		if !ok {
			continue
		}
		power = power || m.series == record.GPUPower
		l := labels
		if m.series == record.GPUPower || m.series == record.GPUEnergy {
			l = maps.Clone(labels)
			l["field"] = m.query
		}
		typ := record.TypeGauge
		if m.series == record.GPUEnergy {
			typ = record.TypeCounter
		}
		out = append(out, record.Series{Name: m.series, Labels: l, Type: typ, Value: &v})
	}
	return out, f[0], nil
}

// unitScale converts a value printed with its unit to base units.
var unitScale = map[string]float64{"W": 1, "MHz": 1e6, "%": 0.01, "MiB": 1 << 20, "mJ": 1e-3, "J": 1, "kJ": 1e3}

// smiValue reads one field: a number with or without its unit, or for the clock event
// reasons a hex bitmask; false for a value that does not read.
func smiValue(m smiField, s string) (float64, bool) {
	if m.series == record.GPUClockEventReasons {
		u, err := strconv.ParseUint(s, 0, 64)
		return float64(u), err == nil
	}
	num, unit, _ := strings.Cut(s, " ")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !finite(v) {
		return 0, false
	}
	scale := m.scale
	if unit != "" {
		var ok bool
		if scale, ok = unitScale[unit]; !ok && m.series != record.GPUTemperature {
			return 0, false
		}
		if !ok {
			scale = 1
		}
	}
	if scale == 0 {
		return 0, false // an energy counter without its unit
	}
	return v * scale, true
}

// lineWriter is nvidia-smi's stdout: it calls line with each complete line and the time its
// bytes arrived. exec's copying goroutine calls Write as the pipe yields bytes.
type lineWriter struct {
	line    func([]byte, time.Time)
	partial []byte
	over    bool // the partial line passed maxGPULine: drop it to its end
}

func (w *lineWriter) Write(p []byte) (int, error) {
	at := time.Now()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.partial)+len(p) > maxGPULine {
				w.partial, w.over = w.partial[:0], true
			} else if !w.over {
				w.partial = append(w.partial, p...)
			}
			break
		}
		if !w.over && len(w.partial)+i <= maxGPULine {
			l := append(w.partial, p[:i]...)
			if len(bytes.TrimSpace(l)) > 0 {
				w.line(l, at)
			}
		}
		w.partial, w.over = w.partial[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// tailWriter keeps the first stderrTail bytes written (the reason a tool gives comes first).
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	if room := stderrTail - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
