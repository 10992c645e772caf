// Package progress is the live progress line of a run on stderr: redrawn every second on a
// terminal, a new line every 10 s in a log.
package progress

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"servebench/load"
	"servebench/record"
)

// Progress intervals: a terminal gets a line redrawn every second; a log (CI) one line every
// 10 s, so that a long run shows it is alive without flooding the log.
const (
	ttyEvery = time.Second
	logEvery = 10 * time.Second
	ttftRing = 512 // TTFT p50 "so far" is over the last this many completed requests
)

// Line is the live progress line. The records writer feeds it (cheap counters under a mutex
// on the writer goroutine, never on a request's); a ticker renders it. It implements
// bench.Progress.
type Line struct {
	w     io.Writer
	tty   bool
	every time.Duration

	mu                 sync.Mutex
	point              string
	total              int
	dur                time.Duration
	start              time.Time
	done, failed       int
	tokens             int64
	ttft               []float64
	ttftNext           int
	lastT              time.Time
	lastDone, lastToks int64
	stop, stopped      chan struct{}
	// live, when set (Watch), gives requests in flight and tokens as they stream; warm counts
	// finished warmup requests
	live       *load.Live
	lastStream int64
	warm       int
	firstDone  time.Time // when the first measured request finished: the estimate's start
}

// Watch gives the line the run's live counts (load.Runner.Live): requests in flight, tokens
// streamed from events and the TTFT of first tokens as they arrive, before any request
// completes. Call it before Begin.
func (p *Line) Watch(l *load.Live) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.live = l
	p.mu.Unlock()
}

// New returns the progress line for stderr w.
func New(w io.Writer) *Line {
	p := &Line{w: w, tty: isTerminal(w), every: logEvery}
	if p.tty {
		p.every = ttyEvery
	}
	return p
}

// plainAsked reports whether the environment asks for output without escape codes.
func plainAsked() bool {
	return os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb"
}

// isTerminal reports whether w is a character device (a terminal), not a file or a pipe, that
// may be redrawn: a non-empty NO_COLOR (no-color.org) or TERM=dumb ask for plain lines, without the
// escape codes of a redraw.
func isTerminal(w io.Writer) bool {
	if plainAsked() {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Begin resets the counters for a run of total measured requests (or dur) and starts the
// ticker. point names the sweep point ("" for a plain run).
func (p *Line) Begin(point string, total int, dur time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	now := time.Now()
	p.point, p.total, p.dur, p.start, p.lastT = point, total, dur, now, now
	p.done, p.failed, p.tokens, p.ttft, p.ttftNext, p.lastDone, p.lastToks = 0, 0, 0, p.ttft[:0], 0, 0, 0
	p.warm, p.lastStream, p.firstDone = 0, p.live.Snapshot().Tokens, time.Time{}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	p.mu.Unlock()
	go p.loop()
}

// firstAfter is when a log gets its first line: soon enough to show the run is alive.
const firstAfter = 2 * time.Second

func (p *Line) loop() {
	defer close(p.stopped)
	first := time.NewTimer(min(p.every, firstAfter))
	defer first.Stop()
	select {
	case <-p.stop:
		return
	case now := <-first.C:
		p.render(now)
	}
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.render(now)
		}
	}
}

// Add counts one finished request (called by the records writer).
func (p *Line) Add(r *record.Record) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.Measured() {
		p.warm++
		return
	}
	if p.firstDone.IsZero() {
		p.firstDone = time.Now()
	}
	if !r.OK() {
		p.failed++
		return
	}
	p.done++
	p.tokens += int64(r.OutputTokens)
	if len(r.Events) > 0 && r.Sent > 0 {
		v := float64(r.Events[0].T - r.Sent)
		if len(p.ttft) < ttftRing {
			p.ttft = append(p.ttft, v)
		} else {
			p.ttft[p.ttftNext] = v
			p.ttftNext = (p.ttftNext + 1) % ttftRing
		}
	}
}

// render writes the line: on a terminal redrawn in place, in a log as a new line.
func (p *Line) render(now time.Time) {
	p.mu.Lock()
	line := p.line(now)
	p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// line formats the progress figures; the rates are over the last interval. Holds p.mu.
// With live counts it shows requests in flight and tokens streamed from events (so a run
// whose requests take minutes shows life before the first completes), the TTFT of first
// tokens as they arrive, and the warmup while it runs.
func (p *Line) line(now time.Time) string {
	s := ""
	if p.point != "" {
		s = "[" + p.point + "] "
	}
	lv := p.live.Snapshot()
	if lv.Warmup > 0 {
		s += fmt.Sprintf("warmup: %d done, %d in flight; ", p.warm, lv.Warmup)
	}
	finished := p.done + p.failed
	if p.total > 0 {
		s += fmt.Sprintf("%d/%d requests", finished, p.total)
	} else {
		s += fmt.Sprintf("%v/%v", now.Sub(p.start).Round(time.Second), p.dur)
	}
	if p.live != nil {
		s += fmt.Sprintf("  %d in flight", lv.InFlight-lv.Warmup)
	}
	dt := now.Sub(p.lastT).Seconds()
	if dt > 0 {
		s += fmt.Sprintf("  %.1f req/s", float64(int64(p.done)-p.lastDone)/dt)
		if p.live != nil {
			s += fmt.Sprintf("  %.0f tok/s streamed", float64(lv.Tokens-p.lastStream)/dt)
		} else {
			s += fmt.Sprintf("  %.0f out tok/s", float64(p.tokens-p.lastToks)/dt)
		}
	}
	p.lastT, p.lastDone, p.lastToks, p.lastStream = now, int64(p.done), p.tokens, lv.Tokens
	ttft := "—"
	switch {
	case lv.FirstTokens > 0:
		ttft = fmt.Sprintf("%.1f ms", lv.TTFTP50/1e6)
	case len(p.ttft) > 0:
		sorted := slices.Sorted(slices.Values(p.ttft))
		ttft = fmt.Sprintf("%.1f ms", sorted[len(sorted)/2]/1e6)
	}
	return s + fmt.Sprintf("  TTFT p50 %s  errors %d%s", ttft, p.failed, p.timeLeft(now, finished))
}

// timeLeft is the elapsed time and an estimate of what remains: the rest of --duration, or
// the remaining requests at the rate measured requests have finished since the first did
// (the warmup and the first requests' own latency are not a rate); no estimate before two
// finished.
func (p *Line) timeLeft(now time.Time, finished int) string {
	el := now.Sub(p.start)
	s := "  elapsed " + clock(el)
	switch {
	case p.total == 0 && p.dur > 0:
		s += "  ~" + clock(max(p.dur-el, 0)) + " left"
	case p.total > 0 && finished > 1 && finished < p.total && !p.firstDone.IsZero():
		per := float64(now.Sub(p.firstDone)) / float64(finished-1)
		s += "  ~" + clock(time.Duration(per*float64(p.total-finished))) + " left"
	}
	return s
}

// clock formats d as m:ss (h:mm:ss past an hour).
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

// End stops the ticker and, on a terminal, clears the line.
func (p *Line) End() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.stopped
	p.stop = nil
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
