package metrics

import (
	"fmt"

	"servebench/record"
)

// Thresholds of the measurement-quality warnings: a Go scheduling latency above 1 ms at p99
// shows up in every timestamp we take; a process using 90% of its cores in its busiest
// second has no headroom left to read streams on time.
const (
	schedP99NS   = 1e6
	cpuSaturated = 0.9
)

// attainment fills SLOAttainment: good / measured (cancelled requests are not measured).
func (a *Accumulator) attainment(s *Summary) {
	if !s.SLO.Any() {
		return
	}
	if n := s.Measured; n > 0 {
		s.SLOAttainment = ptr(float64(s.GoodRequests) / float64(n))
	}
}

// ends returns the header's RunEnd lines of the runs that were added.
func (a *Accumulator) ends() []record.RunEnd {
	if a.hdr == nil {
		return nil
	}
	var out []record.RunEnd
	for _, e := range a.hdr.Ends {
		if a.runs[e.Run] {
			out = append(out, e)
		}
	}
	return out
}

// loadWarnings say when the load was not what was asked: requests sent late (naming the
// cause when it can), sending stopped by an error rule, a client that may distort its own
// timestamps.
func (a *Accumulator) loadWarnings(s *Summary) []Warning {
	var w []Warning
	if lp, ok := s.Lateness.Percentile(99); ok && lp > latenessNS {
		read := "read E2E incl. queue, which keeps the wait"
		if !s.Streams() {
			read = "read the latency from dispatch and the queue time, which keep the wait"
		}
		w = append(w, warn(Distorts, read, "requests were dispatched late: lateness %.1f ms at p99 behind their schedule; %s", lp/1e6, a.lateCause(s)))
	}
	// a merged file has one run-end line per shard of a run: their unsent arrivals add up
	unsent := map[int]int{}
	for _, e := range s.Ends {
		unsent[e.Run] += e.Unsent
	}
	for _, e := range s.Ends {
		if e.StopDetail != "" {
			w = append(w, warn(Distorts, "", "%ssending stopped early: %s", runPrefix(e), e.StopDetail))
		}
		if n := unsent[e.Run]; n > 0 {
			delete(unsent, e.Run)
			figures := "queue time and E2E incl. queue leave"
			if !s.Streams() {
				figures = "queue time leaves"
			}
			w = append(w, warn(Distorts, "lower --rate or raise --max-concurrency", "%s%d arrivals of the schedule were due before sending stopped but never sent (%s): they have no records, so %s out the longest waits, and the offered rate was not reached", runPrefix(e), n, a.unsentCause(), figures))
		}
		if q := e.Quality; q != nil {
			first, _ := s.firstFigure()
			w = append(w, qualityWarnings(runPrefix(e), q, first)...)
		}
	}
	return w
}

// unsentCause says what due arrivals waited for.
func (a *Accumulator) unsentCause() string {
	if c := a.opt.MaxConcurrency; c > 0 {
		return fmt.Sprintf("they waited for a slot of the --max-concurrency cap of %d", c)
	}
	return "the load generator was behind its schedule"
}

// lateCause names why requests left late: the concurrency cap when it was full, else the
// load generator itself.
func (a *Accumulator) lateCause(s *Summary) string {
	if c := a.opt.MaxConcurrency; c > 0 && s.MaxInFlight >= c {
		return fmt.Sprintf("the cause is the --max-concurrency cap of %d, which was full (requests waited for a slot): the server cannot keep up with the arrival rate at this cap", c)
	}
	for _, e := range s.Ends {
		if q := e.Quality; q != nil && (q.SchedP99 > schedP99NS || q.CPUMax >= cpuSaturated) {
			return "the cause is the load generator itself (its CPU or Go scheduler was saturated, see below)"
		}
	}
	if a.opt.MaxConcurrency > 0 {
		return fmt.Sprintf("the --max-concurrency cap of %d was never full, so the load generator itself fell behind", a.opt.MaxConcurrency)
	}
	return "no concurrency cap was set, so the load generator itself fell behind"
}

// qualityWarnings say when the client's own timestamps may be off; first names the figure a
// request's server time is read in (TTFT, or the latency of a run that streams nothing).
func qualityWarnings(prefix string, q *record.Quality, first string) []Warning {
	var w []Warning
	kernel := q.Stamps > 0 && q.ReadStamps*100 <= q.Stamps // events stamped from the kernel's receive times
	if q.SchedP99 > schedP99NS {
		what := "timestamps may include the client's own delays"
		if kernel {
			what = "event times come from the kernel's receive times and leave that out, but dispatch and send times (lateness, queue, TTFT's start) may include it"
		}
		w = append(w, warn(Distorts, "give servebench more CPU, or less load per process (--shard)", "%sthe load generator's Go scheduling latency was %.2f ms at p99 (max %.2f ms): %s",
			prefix, q.SchedP99/1e6, q.SchedMax/1e6, what))
	}
	if q.Stamps > 0 && q.ReadStamps*100 > q.Stamps {
		w = append(w, warn(Info, "", "%s%.1f%% of event times (%d of %d) were taken when read, not when received: the kernel gave those reads no receive time (it was just turning timestamps on, or the connection is proxied or not TCP), so they include the client's own delays",
			prefix, 100*float64(q.ReadStamps)/float64(q.Stamps), q.ReadStamps, q.Stamps))
	}
	if q.Sends > 0 && q.WriteSends*100 > q.Sends {
		// The common cause on HTTP/1 over TCP: a transmit report woke Go's poller with nothing
		// to read, and the client stopped asking on that connection (client/arrival_linux.go
		// readErrQueueStall), so every later request on it falls back. The write returns
		// microseconds before the kernel sends, unless servebench's own scheduling is slow,
		// which the scheduling-latency note reports on its own.
		w = append(w, warn(Info, "", "%s%.1f%% of send times (%d of %d) were taken when the write returned, not when the kernel sent the request (the kernel gave no transmit time: a connection on which servebench stopped asking, or a transport without one), so their %s starts a few microseconds off the kernel's time (more when servebench's own scheduling was slow, which its own note reports)",
			prefix, 100*float64(q.WriteSends)/float64(q.Sends), q.WriteSends, q.Sends, first))
	}
	if q.CPUMax >= cpuSaturated {
		who := "servebench"
		if q.InProcessServer {
			who = "servebench and the in-process simulator it measures"
		}
		w = append(w, warn(Distorts, "give servebench more CPU, or split the load over processes (--shard)", "%s%s used %.0f%% of %d cores in the busiest second (mean %.0f%%): the client may be distorting timestamps",
			prefix, who, 100*q.CPUMax, q.Cores, 100*q.CPUMean))
	}
	return w
}

func runPrefix(e record.RunEnd) string {
	if e.Label != "" {
		return e.Label + ": "
	}
	return ""
}
