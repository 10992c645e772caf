package metrics

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"servebench/record"
)

// Server is the server's own view of the measurement window, from its Prometheus samples
// (record.Telemetry): what its queue, batch and KV cache did, what its counters moved by, and
// its own latency quantiles, to be set beside the client's figures. Every figure is nil when
// the server did not expose the series or no sample fell where it was needed: an absent
// figure is not a zero.
type Server struct {
	// Sources are the scraped endpoints and how their scrapes went, in order of first sample.
	Sources []ScrapeStats
	// Each figure below is from the first endpoint (by name) that exposes one of its families.
	Waiting, Running *GaugeStat // requests queued / in the batch; summed over label sets
	KVUsage          *GaugeStat // KV-cache usage as a share (1 = full); max over label sets
	// Counter increases between the samples that bracket the window (the latest at or before
	// its start, the earliest at or after its end), so they may cover up to one interval
	// more than the window on each side. A counter that went down (a server restart) counts
	// from its new value, as Prometheus's increase() does.
	Preemptions      *float64
	PromptTokens     *float64
	GenerationTokens *float64
	PrefixQueries    *float64 // vLLM: prompt tokens looked up in the prefix cache
	PrefixHits       *float64 // of which found cached
	PrefixHitRate    *float64 // PrefixHits / PrefixQueries over the window
	// GenerationRate is the server's own output tokens per second inside the window: the
	// generation counter's increase between the first and the last sample taken inside it,
	// over the time between them (GenerationSpan, s); nil with fewer than two such samples.
	// Unlike the bracketing increases above, it covers no time outside the window, so it is
	// a rate to set beside the window's output throughput (a sweep's maximum-throughput
	// point, whose window is a few scrape intervals long).
	GenerationRate *float64
	GenerationSpan float64
	// CachedTokens is llama.cpp's llamacpp:prompt_tokens_cached_total increase: prompt tokens
	// it took from its cache, which its prompt counter (PromptTokens) leaves out. For
	// llama.cpp PrefixHits is this and PrefixQueries PromptTokens + CachedTokens.
	CachedTokens *float64
	// The server's own latency quantiles from its histograms' increase over the window.
	TTFT, ITL, Queue *HistQuantiles
	// Prefill is the server's prefill-time histogram (vLLM): with Queue, where its TTFT went.
	Prefill *HistQuantiles
	// SpecDecode is vLLM's speculative decoding over the window (specdecode.go).
	SpecDecode *SpecDecode
	// Attribution ties the slowest first tokens to the server's queue.
	Attribution *Attribution
	// GPU is this machine's GPUs over the window (nvidia-smi's samples); nil without them.
	GPU *GPU
	// Gauges and Counters are every gauge's and counter's figures over the window, by
	// series (name and labels), sorted.
	Gauges   []GaugeStat
	Counters []CounterDelta
}

// ScrapeStats is how the scrapes of one endpoint went during the run.
type ScrapeStats struct {
	Source    string
	Scrapes   int            // samples taken
	OK        int            // of which succeeded
	Errors    map[string]int // failed samples per reason
	Cut       int            // sample lines dropped over the per-scrape series cap
	NonFinite int            // samples dropped for a NaN or infinite value
	Thinned   int            // samples dropped to bound the scraper's memory
	MaxSeries int            // the most series one successful scrape kept
}

// GaugeStat is a gauge over the window: the samples taken inside it.
type GaugeStat struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	N      int               `json:"n"`
	Mean   float64           `json:"mean"`
	P50    float64           `json:"p50"`
	Max    float64           `json:"max"`
}

// CounterDelta is one counter's increase over the window (see Server).
type CounterDelta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Delta  float64           `json:"delta"`
}

// HistQuantiles are quantiles of a server histogram's increase over the window, in the
// histogram's unit (seconds for every latency family), computed as Prometheus's
// histogram_quantile does: linear interpolation inside the bucket holding the rank, from 0
// for the first bucket, and the highest finite bound when the rank is in the +Inf bucket.
// Their precision is the bucket width: a p50 of 0.3 s from buckets 0.25 and 0.5 is only
// known to lie in (0.25, 0.5].
type HistQuantiles struct {
	Name  string  `json:"name"`
	Count float64 `json:"count"` // observations in the window
	Mean  float64 `json:"mean"`  // Δsum / Δcount
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	// P50Lo and P50Hi are the bounds of the bucket holding the p50.
	P50Lo float64 `json:"p50_bucket_lo"`
	P50Hi float64 `json:"p50_bucket_hi"`
}

// Attribution: of the completed requests whose TTFT was above the run's p90, the share that
// saw a waiting queue (the latest sample at or before their sent time had waiting > 0),
// against the same share of the others. Requests sent before the first sample are left out.
type Attribution struct {
	P90         float64 // the run's TTFT p90, ns
	Slow        int     // requests above it with a sample before them
	SlowWaiting int
	Rest        int
	RestWaiting int
}

// roles name, per figure, the families that carry it in each server, first match wins.
var roles = struct {
	waiting, running, kv, preempt, prompt, gen, queries, hits, cached, ttft, itl, queue, prefill []string
}{
	waiting: []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size", "llamacpp:requests_deferred"},
	running: []string{"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size", "llamacpp:requests_processing"},
	kv:      []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"},
	preempt: []string{"vllm:num_preemptions_total"},
	prompt:  []string{"vllm:prompt_tokens_total", "sglang:prompt_tokens_total", "llamacpp:prompt_tokens_total"},
	gen:     []string{"vllm:generation_tokens_total", "sglang:generation_tokens_total", "llamacpp:tokens_predicted_total"},
	queries: []string{"vllm:prefix_cache_queries_total"},
	hits:    []string{"vllm:prefix_cache_hits_total"},
	cached:  []string{"llamacpp:prompt_tokens_cached_total"},
	prefill: []string{"vllm:request_prefill_time_seconds"},
	ttft:    []string{"vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"},
	itl:     []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds", "sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds", "tgi_request_mean_time_per_token_duration"},
	queue:   []string{"vllm:request_queue_time_seconds", "sglang:queue_time_seconds", "tgi_request_queue_duration"},
}

// SentTTFT is one completed request's sent time and TTFT (ns), for Attribution.
type SentTTFT struct{ Sent, TTFT int64 }

// ServerDuring summarises telemetry samples over the window [start, end] (ns since t0; the
// samples of one run), with reqs the run's completed requests for the attribution. Nil when
// there are no samples.
func ServerDuring(samples []record.Telemetry, start, end int64, reqs []SentTTFT) *Server {
	if len(samples) == 0 {
		return nil
	}
	s := &Server{Sources: scrapeStats(samples)}
	ok := okSamples(samples)
	if len(ok) == 0 || end <= start {
		return s
	}
	s.Waiting = roleGauge(ok, roles.waiting, start, end, sumFold)
	s.Running = roleGauge(ok, roles.running, start, end, sumFold)
	s.KVUsage = roleGauge(ok, roles.kv, start, end, maxFold)
	s.Preemptions = roleCounter(ok, roles.preempt, start, end)
	s.PromptTokens = roleCounter(ok, roles.prompt, start, end)
	s.GenerationTokens = roleCounter(ok, roles.gen, start, end)
	s.GenerationRate, s.GenerationSpan = innerRate(ok, roles.gen, start, end)
	s.PrefixQueries = roleCounter(ok, roles.queries, start, end)
	s.PrefixHits = roleCounter(ok, roles.hits, start, end)
	s.CachedTokens = roleCounter(ok, roles.cached, start, end)
	if s.PrefixQueries == nil && s.CachedTokens != nil && s.PromptTokens != nil {
		// llama.cpp: its prompt counter leaves the cached tokens out
		s.PrefixHits, s.PrefixQueries = s.CachedTokens, ptr(*s.PromptTokens+*s.CachedTokens)
	}
	if s.PrefixQueries != nil && s.PrefixHits != nil && *s.PrefixQueries > 0 {
		s.PrefixHitRate = ptr(*s.PrefixHits / *s.PrefixQueries)
	}
	s.TTFT = roleHist(ok, roles.ttft, start, end)
	s.ITL = roleHist(ok, roles.itl, start, end)
	s.Queue = roleHist(ok, roles.queue, start, end)
	s.Prefill = roleHist(ok, roles.prefill, start, end)
	s.SpecDecode = specDecodeDuring(ok, start, end)
	s.Attribution = attribute(ok, reqs)
	if src, ts := pickGPUSamples(ok); len(ts) > 0 {
		s.GPU = gpuDuring(ts, start, end)
		if s.GPU != nil {
			s.GPU.Source = src
		}
	}
	s.Gauges, s.Counters = everySeries(ok, start, end)
	return s
}

// scrapeStats counts each source's samples.
func scrapeStats(samples []record.Telemetry) []ScrapeStats {
	var out []ScrapeStats
	idx := map[string]int{}
	for i := range samples {
		t := &samples[i]
		j, seen := idx[t.Source]
		if !seen {
			j = len(out)
			idx[t.Source] = j
			out = append(out, ScrapeStats{Source: t.Source})
		}
		st := &out[j]
		st.Scrapes++
		st.Cut += t.Cut
		st.NonFinite += t.NonFinite
		st.Thinned += t.Thinned
		if t.OK {
			st.OK++
			st.MaxSeries = max(st.MaxSeries, len(t.Series))
		} else {
			if st.Errors == nil {
				st.Errors = map[string]int{}
			}
			st.Errors[t.Error]++
		}
	}
	return out
}

// okSamples are the successful samples, per source in time order.
func okSamples(samples []record.Telemetry) map[string][]*record.Telemetry {
	out := map[string][]*record.Telemetry{}
	for i := range samples {
		if t := &samples[i]; t.OK {
			out[t.Source] = append(out[t.Source], t)
		}
	}
	for _, ts := range out {
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].T < ts[j].T })
	}
	return out
}

// sourcesOf returns the sources in a stable order (by name).
func sourcesOf(ok map[string][]*record.Telemetry) []string {
	return slices.Sorted(maps.Keys(ok))
}

// valueOf folds one sample's series of a family into one value; false when absent.
func valueOf(t *record.Telemetry, name string, fold func(acc, v float64, first bool) float64) (float64, bool) {
	var acc float64
	found := false
	for i := range t.Series {
		sr := &t.Series[i]
		if sr.Name == name && sr.Value != nil {
			acc = fold(acc, *sr.Value, !found)
			found = true
		}
	}
	return acc, found
}

func sumFold(acc, v float64, _ bool) float64 { return acc + v }
func maxFold(acc, v float64, first bool) float64 {
	if first {
		return v
	}
	return math.Max(acc, v)
}

// roleGauge is the first family of names that a source exposes inside the window, as
// mean, p50 and max of the samples taken in [start, end].
func roleGauge(ok map[string][]*record.Telemetry, names []string, start, end int64, fold func(float64, float64, bool) float64) *GaugeStat {
	for _, src := range sourcesOf(ok) {
		for _, name := range names {
			var vals []float64
			for _, t := range ok[src] {
				if t.T < start || t.T > end {
					continue
				}
				if v, found := valueOf(t, name, fold); found {
					vals = append(vals, v)
				}
			}
			if len(vals) > 0 {
				g := gaugeStat(vals)
				g.Name = name
				return &g
			}
		}
	}
	return nil
}

func gaugeStat(vals []float64) GaugeStat {
	sorted := slices.Sorted(slices.Values(vals))
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	return GaugeStat{N: len(sorted), Mean: sum / float64(len(sorted)), P50: Quantile(sorted, 50), Max: sorted[len(sorted)-1]}
}

// bracket returns the samples from the latest at or before start to the earliest at or after
// end (ts in time order): the shortest run of samples covering the window. When no sample
// precedes the window it starts at the first; when none follows, it ends at the last.
func bracket(ts []*record.Telemetry, start, end int64) []*record.Telemetry {
	lo, hi := 0, len(ts)-1
	for i, t := range ts {
		if t.T <= start {
			lo = i
		}
	}
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].T >= end {
			hi = i
		}
	}
	if hi < lo {
		return nil
	}
	return ts[lo : hi+1]
}

// seriesKey identifies a series inside a family: its labels, sorted.
func seriesKey(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + labels[k] + "\x00")
	}
	return b.String()
}

// increase is a family's increase over ts, summed over its label sets; per series the sum of
// its rises between consecutive samples, a fall counting as a reset to zero. get returns the
// value of a series; false when the series has none.
func increase(ts []*record.Telemetry, name string, get func(*record.Series) (float64, bool)) (float64, bool) {
	prev := map[string]float64{}
	var total float64
	found := false
	for i, t := range ts {
		for j := range t.Series {
			sr := &t.Series[j]
			if sr.Name != name {
				continue
			}
			v, ok := get(sr)
			if !ok {
				continue
			}
			k := seriesKey(sr.Labels)
			if p, seen := prev[k]; seen {
				if v >= p {
					total += v - p
				} else {
					total += v
				}
			} else if i > 0 {
				total += v // the series appeared during the window: it started from 0
			}
			prev[k] = v
			found = true
		}
	}
	return total, found && len(ts) > 1
}

func counterValue(sr *record.Series) (float64, bool) {
	if sr.Value == nil {
		return 0, false
	}
	return *sr.Value, true
}

// roleCounter is the first family of names that a source exposes, as its increase over the
// samples bracketing the window.
func roleCounter(ok map[string][]*record.Telemetry, names []string, start, end int64) *float64 {
	for _, src := range sourcesOf(ok) {
		ts := bracket(ok[src], start, end)
		for _, name := range names {
			if d, found := increase(ts, name, counterValue); found {
				return ptr(d)
			}
		}
	}
	return nil
}

// innerRate is the first family of names that a source exposes, as its increase per second
// between the first and the last of its samples inside [start, end], and the seconds between
// them; nil with fewer than two samples inside.
func innerRate(ok map[string][]*record.Telemetry, names []string, start, end int64) (*float64, float64) {
	for _, src := range sourcesOf(ok) {
		var in []*record.Telemetry
		for _, t := range ok[src] {
			if t.T >= start && t.T <= end {
				in = append(in, t)
			}
		}
		if len(in) < 2 || in[len(in)-1].T <= in[0].T {
			continue
		}
		span := float64(in[len(in)-1].T-in[0].T) / 1e9
		for _, name := range names {
			if d, found := increase(in, name, counterValue); found {
				return ptr(d / span), span
			}
		}
	}
	return nil, 0
}

// roleHist is the first histogram family of names that a source exposes, as quantiles of its
// increase over the samples bracketing the window.
func roleHist(ok map[string][]*record.Telemetry, names []string, start, end int64) *HistQuantiles {
	for _, src := range sourcesOf(ok) {
		ts := bracket(ok[src], start, end)
		for _, name := range names {
			if h := histDelta(ts, name); h != nil {
				return h
			}
		}
	}
	return nil
}

// histDelta is the increase of a histogram family over ts (summed over its label sets) and
// its quantiles; nil when absent or nothing was observed.
func histDelta(ts []*record.Telemetry, name string) *HistQuantiles {
	var bounds []float64
	for _, t := range ts {
		for j := range t.Series {
			if sr := &t.Series[j]; sr.Name == name && sr.Type == record.TypeHistogram {
				for _, b := range sr.Buckets {
					if !slices.Contains(bounds, b[0]) {
						bounds = append(bounds, b[0])
					}
				}
			}
		}
	}
	slices.Sort(bounds)
	count, ok := increase(ts, name, func(sr *record.Series) (float64, bool) {
		if sr.Count == nil {
			return 0, false
		}
		return *sr.Count, true
	})
	if !ok || count <= 0 {
		return nil
	}
	sum, _ := increase(ts, name, func(sr *record.Series) (float64, bool) {
		if sr.Sum == nil {
			return 0, false
		}
		return *sr.Sum, true
	})
	cum := make([]float64, len(bounds))
	for i, le := range bounds {
		cum[i], _ = increase(ts, name, func(sr *record.Series) (float64, bool) {
			for _, b := range sr.Buckets {
				if b[0] == le {
					return b[1], true
				}
			}
			return 0, false
		})
	}
	h := &HistQuantiles{Name: name, Count: count, Mean: sum / count}
	h.P50, h.P50Lo, h.P50Hi = histQuantile(0.5, bounds, cum, count)
	h.P99, _, _ = histQuantile(0.99, bounds, cum, count)
	return h
}

// histQuantile is Prometheus's histogram_quantile over cumulative bucket counts cum (upper
// bounds bounds, ascending; count the +Inf bucket): the rank q·count is found in the first
// bucket whose cumulative count reaches it, and the value interpolated linearly between that
// bucket's lower bound (the previous bound, or 0 for the first bucket when its bound is
// positive) and its upper bound. A rank in the +Inf bucket gives the highest finite bound.
// It also returns the bucket's bounds.
func histQuantile(q float64, bounds, cum []float64, count float64) (v, lo, hi float64) {
	if len(bounds) == 0 {
		return math.NaN(), 0, math.Inf(1)
	}
	// cumulative counts must not fall (a torn scrape could make them): take the running max
	c := make([]float64, len(cum))
	for i, x := range cum {
		c[i] = x
		if i > 0 && c[i-1] > x {
			c[i] = c[i-1]
		}
	}
	rank := q * count
	i := sort.SearchFloat64s(c, rank)
	if i >= len(bounds) {
		last := bounds[len(bounds)-1]
		return last, last, math.Inf(1)
	}
	lo, prev := 0.0, 0.0
	if i > 0 {
		lo, prev = bounds[i-1], c[i-1]
	} else if bounds[0] <= 0 {
		return bounds[0], bounds[0], bounds[0]
	}
	hi = bounds[i]
	in := c[i] - prev
	if in <= 0 {
		return hi, lo, hi
	}
	return lo + (hi-lo)*(rank-prev)/in, lo, hi
}

// attribute splits the requests at the run's TTFT p90 and counts, on each side, those whose
// latest waiting sample at or before their sent time showed a queue.
func attribute(ok map[string][]*record.Telemetry, reqs []SentTTFT) *Attribution {
	if len(reqs) == 0 {
		return nil
	}
	var ts []*record.Telemetry
	var name string
	for _, src := range sourcesOf(ok) {
		for _, n := range roles.waiting {
			for _, t := range ok[src] {
				if _, found := valueOf(t, n, sumFold); found {
					ts, name = ok[src], n
					break
				}
			}
			if name != "" {
				break
			}
		}
		if name != "" {
			break
		}
	}
	if name == "" {
		return nil
	}
	ttfts := make([]float64, len(reqs))
	for i, r := range reqs {
		ttfts[i] = float64(r.TTFT)
	}
	slices.Sort(ttfts)
	a := &Attribution{P90: Quantile(ttfts, 90)}
	for _, r := range reqs {
		i := sort.Search(len(ts), func(i int) bool { return ts[i].T > r.Sent }) - 1
		if i < 0 {
			continue
		}
		v, found := valueOf(ts[i], name, sumFold)
		if !found {
			continue
		}
		if float64(r.TTFT) > a.P90 {
			a.Slow++
			if v > 0 {
				a.SlowWaiting++
			}
		} else {
			a.Rest++
			if v > 0 {
				a.RestWaiting++
			}
		}
	}
	return a
}

// everySeries is every gauge and counter series over the window, sorted by name and labels.
func everySeries(ok map[string][]*record.Telemetry, start, end int64) ([]GaugeStat, []CounterDelta) {
	type key struct{ src, name, labels string }
	type acc struct {
		labels map[string]string
		typ    string
		vals   []float64
	}
	series := map[key]*acc{}
	for _, src := range sourcesOf(ok) {
		for _, t := range bracket(ok[src], start, end) {
			for j := range t.Series {
				sr := &t.Series[j]
				if sr.Value == nil || (sr.Type != record.TypeGauge && sr.Type != record.TypeCounter) {
					continue
				}
				k := key{src, sr.Name, seriesKey(sr.Labels)}
				a := series[k]
				if a == nil {
					a = &acc{labels: sr.Labels, typ: sr.Type}
					series[k] = a
				}
				if sr.Type == record.TypeCounter || (t.T >= start && t.T <= end) {
					a.vals = append(a.vals, *sr.Value)
				}
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(series), func(a, b key) int {
		return strings.Compare(a.name+"\x01"+a.labels+"\x01"+a.src, b.name+"\x01"+b.labels+"\x01"+b.src)
	})
	var gs []GaugeStat
	var cs []CounterDelta
	for _, k := range keys {
		a := series[k]
		switch {
		case a.typ == record.TypeGauge && len(a.vals) > 0:
			g := gaugeStat(a.vals)
			g.Name, g.Labels = k.name, a.labels
			gs = append(gs, g)
		case a.typ == record.TypeCounter && len(a.vals) > 1:
			var d float64
			for i := 1; i < len(a.vals); i++ {
				if a.vals[i] >= a.vals[i-1] {
					d += a.vals[i] - a.vals[i-1]
				} else {
					d += a.vals[i]
				}
			}
			cs = append(cs, CounterDelta{Name: k.name, Labels: a.labels, Delta: d})
		}
	}
	return gs, cs
}

// addSent keeps a completed request's sent time and TTFT for the attribution (16 bytes a
// request).
func (a *Accumulator) addSent(r *record.Record) {
	if v, ok := ttft(r); ok {
		a.sents = append(a.sents, SentTTFT{Sent: r.Sent, TTFT: v})
	}
}

// server is the server section of the summary: the header's telemetry of this summary's runs
// over its window.
func (a *Accumulator) server(s *Summary) *Server {
	if a.hdr == nil || len(a.hdr.Telemetry) == 0 {
		return nil
	}
	var ts []record.Telemetry
	for _, t := range a.hdr.Telemetry {
		if a.runs[t.Run] {
			ts = append(ts, t)
		}
	}
	sv := ServerDuring(ts, s.WindowStart, s.WindowEnd, a.sents)
	if sv != nil {
		sv.GPU.Charge(headerValue(a.hdr.Conditions, record.ServerPlacement), headerValue(a.hdr.Observed, record.ObservedServerProcess), s.OutputTokens)
	}
	return sv
}

// headerValue is the value of key among a header's conditions or observations; "" when absent.
func headerValue(cs []record.Condition, key string) string {
	for _, c := range cs {
		if c.Key == key {
			return c.Value
		}
	}
	return ""
}
