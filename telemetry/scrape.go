// Package telemetry samples an inference server's own view of a run (its queue, batch, KV
// cache, prefix cache and latency histograms) from its Prometheus endpoint, on the run's
// clock: every sample is stamped when its response arrived, so package metrics can set the
// server's figures over the measurement window beside the client's.
//
// The scraper is a guest of the benchmark: it has its own goroutine per source and its own
// small HTTP transport (never the benchmark's connection pool, whose connections are sized to
// the load), every scrape is bounded in time (a timeout no longer than the interval) and in
// size (a byte cap on the body and a cap on the series kept), and a scrape that fails, hangs
// or returns garbage is recorded as a failed sample and never fails the run. Samples are
// buffered, within a memory bound, until the end of the run (see record.Telemetry).
package telemetry

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"servebench/record"
)

// Defaults of Config.
const (
	DefaultInterval  = time.Second
	DefaultMaxBody   = 32 << 20 // bytes of one scrape's body
	DefaultMaxSeries = 20000    // series kept of one scrape
	// DefaultMaxBuffered bounds the samples held for one run (estimated bytes, see size):
	// 20,000 series of ~100 bytes are 2 MB a scrape, so 64 MiB keeps ~30 full-size scrapes
	// before thinning, and hours of the default families.
	DefaultMaxBuffered = 64 << 20
	// maxTimeout caps a scrape's time with a long interval: a metrics endpoint that needs
	// more than 10 s is not answering.
	maxTimeout = 10 * time.Second
)

// Source is one endpoint to scrape.
type Source struct {
	URL string // what is fetched
	// Name is what the records call it (the URL with credentials removed).
	Name string
	// Default marks an endpoint guessed from the server's family rather than given by the
	// user: when its first scrape answers an HTTP error (llama.cpp without --metrics answers
	// 501), it is scraped no more and Note says why.
	Default bool
}

// Config is what to scrape, how often and within which bounds. Zero values take the defaults.
type Config struct {
	Sources     []Source
	Interval    time.Duration
	Filter      *Filter // nil: every family
	MaxBody     int64
	MaxSeries   int
	MaxBuffered int64
	Insecure    bool // skip TLS verification, like the benchmark's --insecure
	// Note receives one line when a default source is dropped (nil: discarded).
	Note func(string)
	// GPU is the nvidia-smi to run for GPU samples every Interval ("" for none): the caller
	// decides, since only a server on this machine runs on these GPUs.
	GPU string
}

func (c *Config) fill() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxSeries <= 0 {
		c.MaxSeries = DefaultMaxSeries
	}
	if c.MaxBuffered <= 0 {
		c.MaxBuffered = DefaultMaxBuffered
	}
}

// Timeout is a scrape's time bound: the interval, at most 10 s, so a hung endpoint costs one
// tick and scrapes never pile up.
func (c *Config) Timeout() time.Duration { return min(c.Interval, maxTimeout) }

// gpuStartWait is the longest Prime waits for nvidia-smi's first reading.
const gpuStartWait = 3 * time.Second

// Sample is one scrape, stamped with its absolute (monotonic) arrival time; To converts it to
// a record line on a run's clock.
type Sample struct {
	At time.Time
	record.Telemetry
}

// To returns the sample as a record line of run run, its time in ns since t0.
func (s Sample) To(t0 time.Time, run int) record.Telemetry {
	t := s.Telemetry
	t.V, t.Run, t.T = record.TelemetryVersion, run, s.At.Sub(t0).Nanoseconds()
	return t
}

// Scraper scrapes its sources. Prime takes the first sample of a run (before its first
// request), Start the periodic ones, Stop the last (after its last request) and returns them
// all. It may be primed again for the next run.
type Scraper struct {
	cfg    Config
	client *http.Client
	srcs   []*source

	mu     sync.Mutex
	buf    []Sample // guarded by mu
	size   int64    // estimated bytes of buf
	primed bool

	stop chan struct{}
	wg   sync.WaitGroup
	gpu  *gpuSampler // nil: no GPU samples
}

// source is one endpoint's state, touched only by its own goroutine (or by Prime and Stop
// while no goroutine runs).
type source struct {
	Source
	dropped bool
	text    bytes.Buffer // the filtered body, reused between scrapes
}

// New returns a Scraper of cfg's sources and GPUs, or nil when there is nothing to sample.
func New(cfg Config) *Scraper {
	if len(cfg.Sources) == 0 && cfg.GPU == "" {
		return nil
	}
	cfg.fill()
	// Its own transport: a scrape must not take (or wait for) a connection of the benchmark's
	// pool, and a hung endpoint's connection is closed at the timeout without touching it.
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        len(cfg.Sources),
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true, // metrics bodies are small; the byte cap counts what is read
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: cfg.Insecure},
	}
	s := &Scraper{cfg: cfg, client: &http.Client{Transport: tr}}
	if cfg.GPU != "" {
		s.gpu = &gpuSampler{path: cfg.GPU, interval: cfg.Interval, add: s.add}
	}
	for _, src := range cfg.Sources {
		if src.Name == "" {
			src.Name = src.URL
		}
		s.srcs = append(s.srcs, &source{Source: src})
	}
	return s
}

// Prime takes one sample of every source, concurrently, and returns when all have answered or
// timed out. It does nothing when already primed (the first run is primed before t0, so that
// the sample precedes every request).
func (s *Scraper) Prime(ctx context.Context) {
	if s == nil || s.primed {
		return
	}
	s.primed = true
	var wg sync.WaitGroup
	if s.gpu != nil {
		// its process lives until Stop; Prime waits for its first reading, within the timeout
		// or gpuStartWait, whichever is longer: nvidia-smi's start (NVML init) takes longer
		// than a short interval, and a reading after t0 would leave the run's start unsampled
		wg.Go(func() { s.gpu.start(max(s.cfg.Timeout(), gpuStartWait)) })
	}
	s.scrapeAll(ctx)
	wg.Wait()
	for _, src := range s.srcs {
		if src.Default && !src.dropped && s.lastFailedHTTP(src.Name) {
			src.dropped = true
			if s.cfg.Note != nil {
				s.cfg.Note(fmt.Sprintf("telemetry: %s answered an HTTP error: not scraped again this run (llama.cpp serves /metrics only when started with --metrics)", src.Name))
			}
		}
	}
}

// lastFailedHTTP reports whether the latest sample of source name failed with an HTTP status.
func (s *Scraper) lastFailedHTTP(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.buf) - 1; i >= 0; i-- {
		if s.buf[i].Source == name {
			return !s.buf[i].OK && len(s.buf[i].Error) > 5 && s.buf[i].Error[:5] == "http "
		}
	}
	return false
}

// Start scrapes every source each interval, each on its own goroutine, until Stop.
func (s *Scraper) Start() {
	if s == nil {
		return
	}
	s.stop = make(chan struct{})
	for _, src := range s.srcs {
		if src.dropped {
			continue
		}
		s.wg.Add(1)
		go s.loop(src, s.stop)
	}
}

// loop scrapes src each interval until stop is closed. A scrape that outlasts its tick makes the ticker drop ticks
// rather than queue them, so scrapes never overlap.
func (s *Scraper) loop(src *source, stop <-chan struct{}) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	// stop cancels a scrape in flight too: Stop must not wait out a hung endpoint's timeout
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.scrape(ctx, src)
		}
	}
}

// Stop ends the periodic scrapes, takes the last sample of every source when final is true
// (after the run's last request; false when the run was cancelled hard), and returns every
// sample since Prime, in time order per source. The scraper may then be primed again.
func (s *Scraper) Stop(final bool) []Sample {
	if s == nil {
		return nil
	}
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
		s.stop = nil
	}
	if final {
		s.scrapeAll(context.Background())
	}
	if s.gpu != nil {
		s.gpu.stop(final, s.cfg.Timeout()+time.Second) // its last reading follows the last request too
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.buf
	s.buf, s.size, s.primed = nil, 0, false
	return out
}

func (s *Scraper) scrapeAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, src := range s.srcs {
		if src.dropped {
			continue
		}
		wg.Go(func() { s.scrape(ctx, src) })
	}
	wg.Wait()
}

// scrape takes one sample of src and buffers it.
func (s *Scraper) scrape(ctx context.Context, src *source) {
	smp := s.fetch(ctx, src)
	if ctx.Err() != nil && !smp.OK && errors.Is(ctx.Err(), context.Canceled) {
		return // stopped mid-scrape: not the server's failure
	}
	s.add(smp)
}

// fetch GETs src within the timeout and reads it within the caps.
func (s *Scraper) fetch(ctx context.Context, src *source) Sample {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout())
	defer cancel()
	start := time.Now()
	smp := Sample{At: start, Telemetry: record.Telemetry{Source: src.Name}}
	fail := func(err error) Sample {
		smp.Dur = time.Since(start).Nanoseconds()
		smp.Error = errText(err)
		smp.Series = nil
		return smp
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return fail(err)
	}
	// text format 0.0.4, which every server in our table speaks; a server offering
	// OpenMetrics or protobuf must not choose them for us
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := s.client.Do(req)
	smp.At = time.Now() // the response's arrival: the server's figures are from about now
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("http %d", resp.StatusCode))
	}
	src.text.Reset()
	lim := limits{body: s.cfg.MaxBody, series: s.cfg.MaxSeries}
	n, _, cut, err := prefilter(resp.Body, s.cfg.Filter, lim, &src.text)
	smp.Bytes, smp.Cut = n, cut
	if err != nil {
		return fail(err)
	}
	series, nonFinite, err := parse(src.text.Bytes())
	if src.text.Cap() > 4<<20 {
		src.text = bytes.Buffer{} // a huge body once must not stay held between scrapes
	}
	if err != nil {
		return fail(err)
	}
	smp.Dur = time.Since(start).Nanoseconds()
	smp.OK, smp.Series, smp.NonFinite = true, series, nonFinite
	return smp
}

// errText is a short, stable reason for a failed scrape.
func errText(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
