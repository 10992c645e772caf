package load

// A closed loop's measured requests start on a drained server. Each user sends its next
// request as soon as its last one ended, so without a barrier the first measured requests go
// out while the other users' warmup requests are still running or queued: above the
// server's capacity they queue behind the whole warmup, and the measured window opens with
// seconds in which the server serves nothing but warmup. A sweep's 40-user point against a
// 4-slot llama.cpp server measured 1.92 req/s that way while the server completed 3.65.
// Counting every completion in the window whatever its phase was the other choice; it was
// not taken because the latencies would still be those of requests queued behind the
// warmup, and a warmup of a different length would move them. So the first measured request
// waits until every warmup request has ended: the measured phase starts on an idle server
// with every user sending at once, as the warmup did (it therefore met the same batch
// shapes), and the window holds the point's load and nothing else. Its scheduled time is
// when it was taken after the wait: the wait is the tool's, not the server's.
//
// An open loop is not held: its arrivals keep their schedule (a held arrival would be
// recorded late and its queue time charged to the server), and at a rate the server keeps
// up with, the warmup drains on its own.

// drainWait returns the channel to wait on before the first measured request of a closed
// loop while warmup requests are in flight, or nil when the request may go (take holds s.mu).
func (s *state) drainWait() <-chan struct{} {
	if s.cfg.Pacer != nil || s.warmOut == 0 {
		return nil
	}
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	return s.drained
}

// warmEnded counts a closed loop's warmup request as ended and, at the last one, releases
// the users waiting to send the first measured requests.
func (s *state) warmEnded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warmOut--
	if s.warmOut == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// awaitDrain waits for the warmup to drain; false when sending stopped meanwhile.
func (s *state) awaitDrain(wait <-chan struct{}) bool {
	select {
	case <-wait:
		return true
	case <-s.sending.Done():
		return false
	}
}
