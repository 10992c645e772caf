package load

import "time"

// Sending on time. Go's timers sleep in the network poller, whose wait is in whole
// milliseconds: a timer with a fraction of a millisecond left waits a whole one more, so an
// open loop that slept to each arrival with a timer sent it 0–1 ms late (0.7 ms at the
// median), before any wait for a core. The open loop therefore wakes sendLead before an
// arrival, takes it and makes its request (record, body, headers) meanwhile, and the
// request's Dispatched stamp (stamp.Dispatched) waits for the scheduled instant itself: in
// one sleeping system call, which the kernel ends within microseconds of its deadline
// (sleepFine), after a timer when more than fineWait is left (never for the open loop's own
// requests). Nothing spins. The stamp is still taken when the wait is over, immediately
// before the request is handed to the HTTP client. Measured figures: docs/accuracy.md,
// "Open-loop send lateness".
const (
	// sendLead is how early the open loop wakes for an arrival: a timer's millisecond, plus
	// the time to make the request.
	sendLead = 2 * time.Millisecond
	// fineWait is the longest wait left to the sleeping system call: more than the timer's
	// millisecond, so that a timer before it never overshoots the deadline, and no less than
	// sendLead, so that a request made after the open loop's early wake-up waits in one
	// sleep, not a timer's and then the system call's: each wake-up waits for a core again,
	// milliseconds on a loaded machine.
	fineWait = sendLead
)

// waitUntil returns at deadline, or at once when it has passed. A runner in a synctest
// bubble (virtual) waits with timers alone: the bubble's clock does not move while a
// goroutine sleeps in a system call.
func waitUntil(deadline time.Time, virtual bool) {
	d := time.Until(deadline)
	switch {
	case d <= 0:
		return
	case virtual:
		time.Sleep(d)
		return
	case d > fineWait:
		time.Sleep(d - fineWait)
	}
	if d = time.Until(deadline); d > 0 {
		sleepFine(d)
	}
	if d = time.Until(deadline); d > 0 { // an interrupted sleep
		time.Sleep(d)
	}
}
