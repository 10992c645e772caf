package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"servebench/record"
)

// gpuQuery is what nvidia-smi is asked for, in the order parseGPULine reads it.
const gpuQuery = "index,power.draw,clocks.sm,utilization.gpu,memory.used,temperature.gpu"

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
	cmd := exec.CommandContext(ctx, g.path, "--query-gpu="+gpuQuery,
		"--format=csv,noheader,nounits", "-lms", strconv.FormatInt(ms, 10))
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
	series, idx, err := parseGPULine(string(b))
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

// parseGPULine reads "0, 251.37, 1980, 87, 40213, 64": index, power (W), SM clock (MHz),
// utilisation (%), memory used (MiB), temperature (°C), as gauges in base units labelled
// with the index. A field nvidia-smi cannot read ("[N/A]", "[Not Supported]") is left out.
func parseGPULine(line string) ([]record.Series, string, error) {
	f := strings.Split(strings.TrimSpace(line), ",")
	if len(f) != 6 {
		return nil, "", fmt.Errorf("%d fields, want 6: %.80q", len(f), line)
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	if _, err := strconv.Atoi(f[0]); err != nil {
		return nil, "", fmt.Errorf("gpu index %.20q", f[0])
	}
	labels := map[string]string{"gpu": f[0]}
	var out []record.Series
	for i, m := range []struct {
		name  string
		scale float64
	}{{record.GPUPower, 1}, {record.GPUSMClock, 1e6}, {record.GPUUtilization, 0.01},
		{record.GPUMemoryUsed, 1 << 20}, {record.GPUTemperature, 1}} {
		v, err := strconv.ParseFloat(f[i+1], 64)
		if err != nil || !finite(v) {
			continue
		}
		v *= m.scale
		out = append(out, record.Series{Name: m.name, Labels: labels, Type: record.TypeGauge, Value: &v})
	}
	return out, f[0], nil
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
