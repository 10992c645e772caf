package telemetry

import "servebench/record"

// add buffers one sample, thinning the buffer when it passes the memory bound.
func (s *Scraper) add(smp Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, smp)
	s.size += size(&smp)
	for s.size > s.cfg.MaxBuffered && s.thin() {
	}
}

// size estimates the bytes a sample holds: its strings, label maps and buckets, plus the
// fixed parts. A Go map costs about 300 bytes before its first entry and 50 a small entry
// (measured: a 5,000-series scrape held ~2 MB), so the map dominates small series.
func size(smp *Sample) int64 {
	n := int64(160 + len(smp.Source) + len(smp.Error))
	for i := range smp.Series {
		sr := &smp.Series[i]
		n += int64(140 + len(sr.Name) + 16*(len(sr.Buckets)+len(sr.Quantiles)))
		if len(sr.Labels) > 0 {
			n += 300
		}
		for k, v := range sr.Labels {
			n += int64(50 + len(k) + len(v))
		}
	}
	return n
}

// thin drops every other successful sample of the buffer (keeping, per source, the first and
// the newest: the window's counter deltas need the two ends), and adds each dropped sample's
// count to the next kept one's Thinned of the same source. Failed samples are small and
// kept: they are the count of failures. It reports whether anything was dropped.
func (s *Scraper) thin() bool {
	type state struct {
		seen    int // successful samples of the source met so far
		pending int // dropped since the last kept one
	}
	last := map[string]int{} // index of each source's newest sample
	for i, smp := range s.buf {
		last[smp.Source] = i
	}
	st := map[string]*state{}
	out := s.buf[:0]
	dropped := false
	for i, smp := range s.buf {
		p := st[smp.Source]
		if p == nil {
			p = &state{}
			st[smp.Source] = p
		}
		if smp.OK {
			p.seen++
			if p.seen%2 == 0 && i != last[smp.Source] {
				p.pending += 1 + smp.Thinned
				s.size -= size(&smp)
				dropped = true
				continue
			}
			smp.Thinned += p.pending
			p.pending = 0
		}
		out = append(out, smp)
	}
	clear(s.buf[len(out):])
	s.buf = out
	return dropped
}

// Latest returns the newest successful sample of each scraped source (nvidia-smi's aside), so
// that what the first scrape says about a remote server's GPUs (dcgm-exporter's labels) can be
// recorded among the run's conditions before its header is written.
func (s *Scraper) Latest() []record.Telemetry {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []record.Telemetry
	for i := len(s.buf) - 1; i >= 0; i-- {
		smp := s.buf[i]
		if !smp.OK || smp.Source == record.GPUSource || seen[smp.Source] {
			continue
		}
		seen[smp.Source] = true
		out = append(out, smp.Telemetry)
	}
	return out
}
