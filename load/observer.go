package load

import (
	"strconv"
	"sync/atomic"
	"time"

	"servebench/client"
	"servebench/record"
	"servebench/schema"
)

// stamp is the Observer of one request: it stamps each reported moment with the monotonic
// clock as ns since the run start and writes it into the request's record. It is the only
// place (with the dispatch loop) that reads the clock.
type stamp struct {
	t0         time.Time
	rec        *record.Record
	lastEvent  int64 // when the last event's bytes were read
	readStamp  bool  // lastEvent is the read time: the kernel gave no receive time
	connStart  int64
	prompt     int // server usage, latest non-zero report
	output     int
	rx         client.Arrivals // the connection's kernel receive times; nil: stamp at the read
	rxK, rxT   int64           // the last receive time used (Unix ns) and the stamp it gave
	readStamps int             // content events stamped at the read (the runner sums them per run)
	tx         client.Sends    // the connection's kernel send times; nil: stamp at the write hook
	txMark     uint32          // the end of the request's last write (Sends.LastWrite)
	txPending  bool            // the kernel had not reported that write when its hook ran
	kernelSent bool            // Sent is the kernel's send time
	live       *Live           // the run's live counts (nil: none)
	reason     reasonState     // reasoning and answer phases (reasoning.go)
	warm       *autoWarm       // --warmup auto's judge, streamed to (nil: not a judged request)
	tools      toolState       // the tool calls streamed (tools.go)
	schemas    map[string]*schema.Schema
	text       answerText // the answer text, kept when the run judges answers (answers.go)
	virtual    bool       // the runner is in a synctest bubble (Runner.VirtualClock)
}

// clockCount counts a run's measured content-event stamps and those that fell back to the
// read time although the kernel clock was asked for (see record.Quality.ReadStamps), and
// likewise its send stamps and those taken at the write hook (record.Quality.WriteSends).
// The runner adds each request's counts once, when it returns.
type clockCount struct{ total, read, sends, writeSends atomic.Int64 }

var (
	_ client.ArrivalObserver = (*stamp)(nil)
	_ client.SendObserver    = (*stamp)(nil)
)

func (s *stamp) now() int64 { return int64(time.Since(s.t0)) }

// maxArrivalAge bounds how old a kernel receive time may be and still be used: an older one
// (or one from the future) means the wall clock stepped between the receive and the read.
const maxArrivalAge = time.Minute

// arrived stamps bytes just read: when the connection reports the kernel's receive time, the
// read time moved back by the bytes' age, else the read time; never before floor (the
// previous moment of this request, so stamps stay in order even when one read brought
// several moments). The age is a difference of wall-clock times microseconds to
// milliseconds apart, so the monotonic stamp stays monotonic. Moments that came in the same
// read share one receive time and so get the very same stamp: time.Now reads the wall and
// monotonic clocks separately, and converting each time again would set them tens of ns
// apart, which is noise (an ITL of 20 ns, a decode rate of 10⁹ tokens/s), not a measurement.
func (s *stamp) arrived(floor int64) (t int64, kernel bool) {
	now := time.Now()
	t = int64(now.Sub(s.t0))
	if s.rx != nil {
		if k := s.rx.LastArrival(); k > 0 {
			if k == s.rxK {
				return max(s.rxT, floor), true
			}
			if age := now.UnixNano() - k; age > 0 && age < int64(maxArrivalAge) {
				t -= age
				s.rxK, s.rxT = k, t
				kernel = true
			}
		}
	}
	return max(t, floor), kernel
}

// Arrivals implements client.ArrivalObserver.
func (s *stamp) Arrivals(a client.Arrivals) { s.rx = a }

// Sends implements client.SendObserver.
func (s *stamp) Sends(t client.Sends) { s.tx = t }

// Dispatched waits for the request's scheduled time, when the open loop made the request
// ahead of it (ontime.go), and stamps the dispatch.
func (s *stamp) Dispatched() {
	waitUntil(s.t0.Add(time.Duration(s.rec.Scheduled)), s.virtual)
	s.rec.Dispatched = s.now()
}

func (s *stamp) ConnectStart() { s.connStart = s.now() }
func (s *stamp) ConnectDone() {
	if s.connStart != 0 {
		s.rec.Connect = s.now() - s.connStart
	}
}

// WroteRequest stamps the end of the request write. The hook runs on the writing goroutine
// once the request is in the connection's buffer, just before the flush that writes its end
// (later when that goroutine waited for a core): with the connection's kernel send times the
// stamp is replaced by when the kernel sent the request's last byte, looked up once the
// flush can have happened (sendDone). Over HTTP/2 the hook can run after the response
// headers were stamped (their receive time): the request was written before its answer
// arrived, so a later stamp is the hook's delay and is capped at the headers.
func (s *stamp) WroteRequest() {
	s.rec.Sent, s.kernelSent, s.txPending = s.now(), false, false
	if s.tx != nil {
		s.txMark, s.txPending = s.tx.LastWrite(), true
	}
	if s.rec.Headers != 0 {
		s.rec.Sent = min(s.rec.Sent, s.rec.Headers)
	}
}

// sendDone looks up the kernel's send time of the request's last byte, if still pending: at
// the headers, the first event or the end, each of which comes after the flush (the server
// answered), though the flushing goroutine may not have counted its write yet when the
// headers come. It moves Sent to that time by its age at now (as arrived converts receive
// times), between the dispatch and the headers; a time before the dispatch is an earlier
// request's write (this one's was not counted yet) and is not used.
func (s *stamp) sendDone(final bool) {
	if !s.txPending {
		return
	}
	now := time.Now()
	k := s.tx.SentAfter(s.txMark)
	age := now.UnixNano() - k
	if k == 0 || age < 0 || age >= int64(maxArrivalAge) {
		s.txPending = !final
		return
	}
	t := int64(now.Sub(s.t0)) - age
	if t < s.rec.Dispatched {
		s.txPending = !final
		return
	}
	if s.rec.Headers != 0 {
		t = min(t, s.rec.Headers)
	}
	s.rec.Sent, s.kernelSent, s.txPending = t, true, false
}

func (s *stamp) Headers(status int) {
	s.sendDone(false)
	s.rec.Headers, _ = s.arrived(s.rec.Sent)
	s.rec.Status = status
}
func (s *stamp) EventRead() {
	s.sendDone(false)
	var kernel bool
	s.lastEvent, kernel = s.arrived(max(s.rec.Headers, s.lastEvent))
	s.readStamp = !kernel
}
func (s *stamp) Choice() {
	if s.rec.FirstEvent == 0 {
		s.rec.FirstEvent = s.lastEvent
	}
}
func (s *stamp) Content(tokens int) {
	if len(s.rec.Events) == 0 && s.rec.Measured() && s.rec.Sent != 0 {
		s.live.first(s.lastEvent - s.rec.Sent)
	}
	s.live.content(tokens)
	s.rec.Events = append(s.rec.Events, record.Event{T: s.lastEvent, N: int32(tokens)})
	s.reason.event(s.rec, tokens)
	s.warm.event(s.rec.ID, s.lastEvent)
	if s.readStamp {
		s.readStamps++
	}
}
func (s *stamp) Usage(prompt, completion int) { s.prompt, s.output = prompt, completion }
func (s *stamp) Server(name string, v float64) {
	if s.rec.Server == nil {
		s.rec.Server = make(map[string]float64)
	}
	s.rec.Server[name] = v
}
func (s *stamp) Done() {
	s.sendDone(true)
	s.rec.Done, _ = s.arrived(max(s.rec.Headers, s.lastEvent))
}

// finish fills the token counts, each with its source (docs/design/METRICS.md): the server's usage first,
// then per-event counts when every event had one, then one token per event.
func (s *stamp) finish(promptSource string) {
	r := s.rec
	if r.Done == 0 {
		r.Done = s.now() // failed or cut: the end is when the backend gave up
	}
	s.reason.finish(r)
	s.tools.finish(r, s.schemas)
	switch {
	case s.prompt > 0:
		r.PromptTokens, r.PromptTokensSource = s.prompt, record.SourceServer
	case r.InputTokens > 0:
		r.PromptTokens, r.PromptTokensSource = r.InputTokens, promptSource
	}
	if s.output > 0 {
		r.OutputTokens, r.OutputTokensSource = s.output, record.SourceServer
		return
	}
	sum := 0
	for _, e := range r.Events {
		if e.N <= 0 {
			sum = -1
			break
		}
		sum += int(e.N)
	}
	switch {
	case sum > 0:
		r.OutputTokens, r.OutputTokensSource = sum, record.SourceEvents
	case len(r.Events) > 0:
		r.OutputTokens, r.OutputTokensSource = len(r.Events), record.SourceCount
	}
}

// RequestID is the X-Request-Id servebench sends with a request: "<run>-<id>" from its
// record's Run and ID. It is derived, not stored, so records do not grow; a server log or the
// simulator's truth log can be joined with the records on it. Built with strconv, not fmt: it
// runs once per request on the dispatch path.
func RequestID(run, id int) string {
	b := make([]byte, 0, 24)
	b = strconv.AppendInt(b, int64(run), 10)
	b = append(b, '-')
	return string(strconv.AppendInt(b, int64(id), 10))
}
