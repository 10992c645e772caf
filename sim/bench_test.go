package sim

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchStreams runs `streams` concurrent streams of `tokens` tokens against s, per b.N
// round, and reports delivered events/s, the client-side mean ITL and the engine's lag.
// The clients speak raw HTTP/1.1 over TCP and only count event prefixes, so that the load
// generator, which shares the 2 cores with the server, costs as little as possible.
func benchStreams(b *testing.B, c Config, streams, tokens int, spread time.Duration) {
	s, base := startSim(b, c)
	addr := strings.TrimPrefix(base, "http://")
	body := fmt.Sprintf(`{"prompt":"go","max_tokens":%d,"ignore_eos":true,"stream":true}`, tokens)
	req := []byte(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body))
	var events, itlSum atomic.Int64
	var mu sync.Mutex
	var rate float64 // Σ per-stream event rates: the aggregate rate while all streams are open
	var lastFirst, firstLast time.Time
	var elapsed time.Duration
	for range b.N {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * spread / time.Duration(streams))
				n, first, last, err := rawStream(addr, req)
				if err != nil || n < 2 {
					b.Errorf("stream: %d events, %v", n, err)
					return
				}
				itl := last.Sub(first) / time.Duration(n-1)
				events.Add(int64(n))
				itlSum.Add(int64(itl))
				mu.Lock()
				if itl > 0 { // 0 when a late stream got all its events in one read
					rate += 1 / itl.Seconds()
				}
				if first.After(lastFirst) {
					lastFirst = first
				}
				if firstLast.IsZero() || last.Before(firstLast) {
					firstLast = last
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		elapsed += time.Since(start)
	}
	total := events.Load()
	if want := int64(b.N * streams * tokens); total != want {
		b.Fatalf("delivered %d events, want %d", total, want)
	}
	lag := s.Lag()
	if !lastFirst.Before(firstLast) {
		b.Logf("warning: the streams never were all open at once; events/s overstates")
	}
	b.ReportMetric(rate/float64(b.N), "events/s")
	b.ReportMetric(float64(itlSum.Load())/float64(b.N*streams)/1e6, "ms/itl")
	b.ReportMetric(float64(lag.P50)/1e6, "lag-p50-ms")
	b.ReportMetric(float64(lag.P99)/1e6, "lag-p99-ms")
	b.ReportMetric(float64(lag.Max)/1e6, "lag-max-ms")
	b.Logf("%d streams × %d tokens: %d events in %v; lag %+v", streams, tokens, total, elapsed, lag)
}

var (
	eventPrefix = []byte(`data: {"id"`)
	donePrefix  = []byte("data: [DONE]")
)

// rawStream sends req on a fresh connection and counts content events until [DONE]. It
// returns the count and the arrival times of the first and last events.
func rawStream(addr string, req []byte) (n int, first, last time.Time, err error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, first, last, err
	}
	defer conn.Close()
	if _, err := conn.Write(req); err != nil {
		return 0, first, last, err
	}
	buf := make([]byte, 32<<10)
	keep := 0 // bytes carried over so that a prefix split across reads is still seen
	for {
		m, err := conn.Read(buf[keep:])
		if m > 0 {
			data := buf[:keep+m]
			if c := bytes.Count(data, eventPrefix); c > 0 {
				last = time.Now()
				if n == 0 {
					first = last
				}
				n += c
			}
			if bytes.Contains(data, donePrefix) {
				break
			}
			keep = min(len(eventPrefix)-1, len(data))
			copy(buf, data[len(data)-keep:])
		}
		if err != nil {
			return n, first, last, err
		}
	}
	return n, first, last, nil
}

// BenchmarkFixed2000Streams: 2,000 streams with a 20 ms ITL is 100,000 events/s. Starts
// are spread over 1 s so that the 2,000 dials do not land at once; streams last 4 s.
func BenchmarkFixed2000Streams(b *testing.B) {
	c := fixedConfig(20*time.Millisecond, 20*time.Millisecond)
	benchStreams(b, c, 2000, 200, time.Second)
}

// BenchmarkModel2000Streams runs the roofline engine with 2,000 sequences in one batch.
func BenchmarkModel2000Streams(b *testing.B) {
	c := DefaultConfig()
	c.MaxNumSeqs = 2048
	benchStreams(b, c, 2000, 128, 500*time.Millisecond)
}

// BenchmarkScheduleStep measures the engine's own per-step cost at a 2,000-sequence batch.
func BenchmarkScheduleStep(b *testing.B) {
	c := DefaultConfig()
	c.MaxNumSeqs = 2048
	c.KVCacheTokens = 1 << 40 // no preemption: every step decodes all 2,000 sequences
	m, _ := newModel(&c)
	s := newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens)
	for i := range 2000 {
		s.add(newSeq(fmt.Sprint(i), 16, 1<<30, 1, 0, time.Time{}))
	}
	for range 10 {
		s.step()
	}
	b.ResetTimer()
	for range b.N {
		s.step()
	}
}

// BenchmarkPrefixCache measures the prefix cache's cost per request at a 2,048-token prompt
// that is cached but for its last block: hashing the prompt (the handler's share), the
// engine's lookup and release, and a whole request through the scheduler.
func BenchmarkPrefixCache(b *testing.B) {
	c := DefaultConfig()
	m, _ := newModel(&c)
	text := words(2048)
	warm := func() *scheduler {
		s := newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens)
		s.cache = newPrefixCache()
		q := cachedSeq(text, 1, m.blockSize)
		s.add(q)
		for !s.idle() {
			s.step()
		}
		return s
	}
	b.Run("hash-2k", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			promptBlockHashes(text, nil, 0, m.blockSize)
		}
	})
	b.Run("lookup-2k", func(b *testing.B) {
		s := warm()
		q := cachedSeq(text, 1, m.blockSize)
		q.prefillTarget = q.prompt
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			hit, _ := s.matchPrefix(q)
			s.holdPrefix(q, hit)
			s.releaseKV(q)
		}
		if q.cached.Load() != 2032 {
			b.Fatalf("cached %d, want 2032", q.cached.Load())
		}
	})
	b.Run("request-2k", func(b *testing.B) {
		s := warm()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			q := cachedSeq(text, 1, m.blockSize)
			s.add(q)
			for !s.idle() {
				s.step()
			}
		}
	})
}
