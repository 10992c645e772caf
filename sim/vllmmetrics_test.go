package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// vllmFamilies is every vLLM family the simulator exports, with its type.
var vllmFamilies = map[string]dto.MetricType{
	"vllm:num_requests_running": dto.MetricType_GAUGE, "vllm:num_requests_waiting": dto.MetricType_GAUGE,
	"vllm:gpu_cache_usage_perc": dto.MetricType_GAUGE, "vllm:kv_cache_usage_perc": dto.MetricType_GAUGE,
	"vllm:gpu_prefix_cache_hit_rate": dto.MetricType_GAUGE,
	"vllm:num_preemptions_total":     dto.MetricType_COUNTER, "vllm:prompt_tokens_total": dto.MetricType_COUNTER,
	"vllm:generation_tokens_total": dto.MetricType_COUNTER, "vllm:request_success_total": dto.MetricType_COUNTER,
	"vllm:prefix_cache_queries_total": dto.MetricType_COUNTER, "vllm:prefix_cache_hits_total": dto.MetricType_COUNTER,
	"vllm:time_to_first_token_seconds": dto.MetricType_HISTOGRAM, "vllm:inter_token_latency_seconds": dto.MetricType_HISTOGRAM,
	"vllm:e2e_request_latency_seconds": dto.MetricType_HISTOGRAM, "vllm:request_queue_time_seconds": dto.MetricType_HISTOGRAM,
	"vllm:request_inference_time_seconds": dto.MetricType_HISTOGRAM, "vllm:request_prefill_time_seconds": dto.MetricType_HISTOGRAM,
	"vllm:request_decode_time_seconds": dto.MetricType_HISTOGRAM, "vllm:request_time_per_output_token_seconds": dto.MetricType_HISTOGRAM,
	"vllm:request_prompt_tokens": dto.MetricType_HISTOGRAM, "vllm:request_generation_tokens": dto.MetricType_HISTOGRAM,
	"vllm:request_max_num_generation_tokens": dto.MetricType_HISTOGRAM, "vllm:request_params_max_tokens": dto.MetricType_HISTOGRAM,
	"vllm:request_params_n": dto.MetricType_HISTOGRAM, "vllm:iteration_tokens_total": dto.MetricType_HISTOGRAM,
}

// perRequest are the histograms observed once per finished request.
var perRequest = []string{"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
	"vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
	"vllm:request_time_per_output_token_seconds", "vllm:request_prompt_tokens", "vllm:request_generation_tokens",
	"vllm:request_max_num_generation_tokens", "vllm:request_params_max_tokens", "vllm:request_params_n",
	"vllm:time_to_first_token_seconds"}

// parseMetrics parses an exposition strictly (expfmt, legacy names) and checks what the
// parser lets pass: every vLLM family has HELP, its type, vLLM's two labels on every
// series, and histograms whose buckets rise in le and in count up to +Inf = _count.
func parseMetrics(t *testing.T, body []byte, modelName string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(pmodel.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("strict parse of /metrics: %v", err)
	}
	for name, typ := range vllmFamilies {
		f := fams[name]
		if f == nil {
			t.Errorf("/metrics lacks %s", name)
			continue
		}
		if f.GetType() != typ || f.GetHelp() == "" {
			t.Errorf("%s: type %v help %q, want %v with help", name, f.GetType(), f.GetHelp(), typ)
		}
		if !bytes.Contains(body, []byte("# HELP "+name+" ")) || !bytes.Contains(body, []byte("# TYPE "+name+" ")) {
			t.Errorf("%s: no HELP or TYPE line", name)
		}
		for _, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["model_name"] != modelName || labels["engine"] != "0" {
				t.Errorf("%s: labels %v, want model_name=%q engine=\"0\"", name, labels, modelName)
			}
			if h := m.Histogram; h != nil {
				checkBuckets(t, name, h)
			}
		}
	}
	return fams
}

func checkBuckets(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	prevLe, prevN := math.Inf(-1), uint64(0)
	for _, b := range h.Bucket {
		if b.GetUpperBound() <= prevLe || b.GetCumulativeCount() < prevN {
			t.Errorf("%s: bucket le=%v count %d after le=%v count %d: not rising", name, b.GetUpperBound(), b.GetCumulativeCount(), prevLe, prevN)
		}
		prevLe, prevN = b.GetUpperBound(), b.GetCumulativeCount()
	}
	if !math.IsInf(prevLe, 1) || prevN != h.GetSampleCount() {
		t.Errorf("%s: last bucket le=%v count %d, want +Inf with _count %d", name, prevLe, prevN, h.GetSampleCount())
	}
}

func hist(fams map[string]*dto.MetricFamily, name string) *dto.Histogram {
	if f := fams[name]; f != nil && len(f.Metric) > 0 {
		return f.Metric[0].Histogram
	}
	return &dto.Histogram{}
}

func counter(fams map[string]*dto.MetricFamily, name string) float64 {
	var v float64
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			v += m.GetCounter().GetValue()
		}
	}
	return v
}

// bounds are a histogram's finite bucket bounds.
func bounds(h *dto.Histogram) []float64 {
	var out []float64
	for _, b := range h.Bucket {
		if !math.IsInf(b.GetUpperBound(), 1) {
			out = append(out, b.GetUpperBound())
		}
	}
	return out
}

func getMetrics(t *testing.T, base string) []byte {
	t.Helper()
	resp, err := testClient.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVLLMHistograms: a few queued streams through the roofline engine, then every family
// is there with vLLM's labels and buckets, each per-request histogram counted every request,
// the phases add up, e2e matches the truth log, and iteration tokens add up to the counters.
func TestVLLMHistograms(t *testing.T) {
	c := DefaultConfig()
	c.MaxNumSeqs = 2 // 6 requests, 2 at a time: the later ones queue
	c.TruthFile = filepath.Join(t.TempDir(), "truth.jsonl")
	s, base := startSim(t, c)
	const n, outTok = 6, 60
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, base+"/v1/completions", completion(distinct("p"+strconv.Itoa(i), 50), outTok))
			evs, _ := readSSE(resp.Body)
			resp.Body.Close()
			if d := decode(t, evs); len(d.content) != outTok {
				t.Errorf("request %d: %d content events, want %d", i, len(d.content), outTok)
			}
		}()
	}
	wg.Wait()
	var body []byte
	for deadline := time.Now().Add(2 * time.Second); ; { // request_success counts when the handler returns
		body = getMetrics(t, base)
		if bytes.Contains(body, []byte(`finished_reason="length"} 6`)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fams := parseMetrics(t, body, s.modelName)

	for _, name := range perRequest {
		if got := hist(fams, name).GetSampleCount(); got != n {
			t.Errorf("%s_count = %d, want %d finished requests", name, got, n)
		}
	}
	if v := counter(fams, "vllm:request_success_total"); v != n {
		t.Errorf("request_success_total = %v, want %d", v, n)
	}
	sum := func(name string) float64 { return hist(fams, name).GetSampleSum() }
	if g := sum("vllm:request_generation_tokens"); g != n*outTok || sum("vllm:request_params_max_tokens") != n*outTok ||
		sum("vllm:request_max_num_generation_tokens") != n*outTok || sum("vllm:request_prompt_tokens") != n*50 || sum("vllm:request_params_n") != n {
		t.Errorf("token histogram sums: generation %v max_tokens %v max_num_generation %v prompt %v n %v", g,
			sum("vllm:request_params_max_tokens"), sum("vllm:request_max_num_generation_tokens"), sum("vllm:request_prompt_tokens"), sum("vllm:request_params_n"))
	}
	e2e, queue, prefill, decodeT, inference := sum("vllm:e2e_request_latency_seconds"), sum("vllm:request_queue_time_seconds"),
		sum("vllm:request_prefill_time_seconds"), sum("vllm:request_decode_time_seconds"), sum("vllm:request_inference_time_seconds")
	if math.Abs(queue+prefill+decodeT-e2e) > 1e-6 || math.Abs(prefill+decodeT-inference) > 1e-6 {
		t.Errorf("phases: queue %v + prefill %v + decode %v vs e2e %v; inference %v", queue, prefill, decodeT, e2e, inference)
	}
	if queue <= 0 {
		t.Errorf("queue time sum %v with 6 requests on 2 sequences", queue)
	}
	if ttft := sum("vllm:time_to_first_token_seconds"); math.Abs(ttft-(queue+prefill)) > 1e-6 {
		t.Errorf("TTFT sum %v, want queue + prefill %v", ttft, queue+prefill)
	}
	if tpot, want := sum("vllm:request_time_per_output_token_seconds"), decodeT/(outTok-1); math.Abs(tpot-want) > 1e-6 {
		t.Errorf("per-request TPOT sum %v, want Σ decode / %d = %v", tpot, outTok-1, want)
	}
	it := hist(fams, "vllm:iteration_tokens_total")
	if tokens := counter(fams, "vllm:prompt_tokens_total") + counter(fams, "vllm:generation_tokens_total"); it.GetSampleSum() != tokens || tokens != n*(50+outTok) {
		t.Errorf("iteration tokens sum %v, want prompt + generation tokens %v = %d", it.GetSampleSum(), tokens, n*(50+outTok))
	}
	if got := it.GetSampleCount(); got < outTok || got > n*outTok {
		t.Errorf("iteration_tokens_total_count %d, want one per step with output, between %d and %d", got, outTok, n*outTok)
	}
	wantTok := build125Buckets(s.maxModelLen())
	if got := bounds(hist(fams, "vllm:request_prompt_tokens")); !slices.Equal(got, wantTok) {
		t.Errorf("token buckets %v, want build_1_2_5_buckets(%d) = %v", got, s.maxModelLen(), wantTok)
	}
	if got := bounds(hist(fams, "vllm:e2e_request_latency_seconds")); !slices.Equal(got, requestLatencyBuckets) {
		t.Errorf("latency buckets %v", got)
	}
	if got := bounds(it); !slices.Equal(got, iterationTokenBuckets) {
		t.Errorf("iteration buckets %v", got)
	}

	// The truth log's e2e: the request's first bytes read to its last token written.
	s.Close()
	truthE2E := truthLatencies(t, c.TruthFile)
	if len(truthE2E) != n {
		t.Fatalf("truth log has %d requests, want %d", len(truthE2E), n)
	}
	var want float64
	for _, d := range truthE2E {
		want += d.Seconds()
	}
	// The truth log starts at the request's first bytes read, the engine's e2e at its arrival
	// in the engine: the handler's parse and hand-off lie between, which a loaded machine
	// stretches (60 ms a request at a load average of 30 on 2 cores). So the engine's sum may
	// not exceed the truth's by more than 1%, and may fall short by 1% plus 100 ms a request.
	if e2e > 1.01*want || e2e < 0.99*want-0.1*n {
		t.Errorf("e2e sum %.6fs, truth log %.6fs: apart by more than the handler's hand-off", e2e, want)
	}
}

// truthLatencies reads a truth log: per request, the last content event's written_ns less
// the request's read_ns.
func truthLatencies(t *testing.T, path string) map[string]time.Duration {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read, last := map[string]int64{}, map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			ID      string `json:"request_id"`
			Kind    string `json:"kind"`
			Read    int64  `json:"read_ns"`
			Written int64  `json:"written_ns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("truth line %q: %v", sc.Text(), err)
		}
		switch ev.Kind {
		case "request":
			read[ev.ID] = ev.Read
		case "content":
			last[ev.ID] = max(last[ev.ID], ev.Written)
		}
	}
	out := map[string]time.Duration{}
	for id, r := range read {
		if w, ok := last[id]; ok {
			out[id] = time.Duration(w - r)
		}
	}
	return out
}

// TestIterationTokensEveryStep drives the scheduler step by step in virtual time, releasing
// each step as runModel does (release): one observation per step that produced tokens, holding that
// step's new tokens plus the prompts of the requests whose first token it produced.
func TestIterationTokensEveryStep(t *testing.T) {
	c := DefaultConfig()
	c.MaxNumSeqs, c.MaxNumBatchedTokens = 3, 256 // chunked prefill: some steps emit nothing
	m, err := newModel(&c)
	if err != nil {
		t.Fatal(err)
	}
	st := newSimStats(m.kvCapacity, m.maxModelLen, false)
	e := newEngine(&c, m, st)
	t0 := time.Unix(1e9, 0)
	var seqs []*seq
	for i, p := range []int{300, 40, 700, 5, 120} {
		q := newSeq("r"+strconv.Itoa(i), p, 10+i, 1, uint64(i), t0)
		q.times.maxTokens = 10 + i
		seqs = append(seqs, q)
		e.sched.add(q)
	}
	now, steps, wantSum := t0, 0, 0
	finish := map[*seq]time.Time{}
	for range 10000 {
		if e.sched.idle() {
			break
		}
		dur := e.sched.step()
		e.stats.markScheduled(e.sched.plan, now)
		end := now.Add(dur)
		if len(e.sched.emitted) > 0 {
			steps++
			for _, q := range e.sched.emitted {
				wantSum++ // chunk 1: one token each
				if q.released.Load() == 0 {
					wantSum += q.prompt
				}
				if q.generated == q.target {
					finish[q] = end
				}
			}
		}
		e.release(e.sched.emitted, end)
		now = end
	}
	if !e.sched.idle() || len(finish) != len(seqs) {
		t.Fatalf("scheduler did not finish: %d of %d", len(finish), len(seqs))
	}
	if got := st.iterTokens.count.Load(); int(got) != steps {
		t.Errorf("iteration_tokens_total_count %d, want %d steps with output", got, steps)
	}
	if got := st.iterTokens.sum.Load(); int(got) != wantSum || wantSum != 300+40+700+5+120+10+11+12+13+14 {
		t.Errorf("iteration_tokens_total_sum %d, want %d", got, wantSum)
	}
	var e2e time.Duration
	for _, q := range seqs {
		e2e += finish[q].Sub(t0)
	}
	if got := time.Duration(st.e2e.sum.Load()); got != e2e {
		t.Errorf("e2e sum %v, want %v", got, e2e)
	}
	if q, p, d := st.queue.sum.Load(), st.prefill.sum.Load(), st.decode.sum.Load(); q+p+d != int64(e2e) || q == 0 {
		t.Errorf("queue %d + prefill %d + decode %d ≠ e2e %d (or no queueing)", q, p, d, e2e)
	}
}

// TestMetricsText checks the raw exposition: vLLM's le spelling, +Inf equal to _count, and
// the fixed-mode engine feeding the same histograms (no queue: TTFT is all prefill).
func TestMetricsText(t *testing.T) {
	s, base := startSim(t, fixedConfig(20*time.Millisecond, 2*time.Millisecond))
	for i := range 3 {
		resp := post(t, base+"/v1/completions", completion(distinct("f"+strconv.Itoa(i), 10), 5))
		readSSE(resp.Body) //nolint:errcheck // the counts are checked through /metrics
		resp.Body.Close()
	}
	body := getMetrics(t, base)
	fams := parseMetrics(t, body, s.modelName)
	label := `model_name="` + s.modelName + `",engine="0"`
	for _, line := range []string{
		`vllm:time_to_first_token_seconds_bucket{` + label + `,le="1.0"} 3`,
		`vllm:e2e_request_latency_seconds_bucket{` + label + `,le="0.3"} 3`,
		`vllm:e2e_request_latency_seconds_bucket{` + label + `,le="+Inf"} 3`,
		`vllm:e2e_request_latency_seconds_count{` + label + `} 3`,
		`vllm:request_params_n_bucket{` + label + `,le="1.0"} 3`,
		`vllm:iteration_tokens_total_sum{` + label + `} 45`,
		`vllm:request_success_total{` + label + `,finished_reason="length"}`,
	} {
		if !bytes.Contains(body, []byte(line)) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "vllm:") && !strings.Contains(l, `engine="0"`) {
			t.Errorf("series without engine label: %q", l)
		}
	}
	if q := hist(fams, "vllm:request_queue_time_seconds").GetSampleSum(); q != 0 {
		t.Errorf("fixed mode queue time %v, want 0", q)
	}
	if p, ttft := hist(fams, "vllm:request_prefill_time_seconds").GetSampleSum(), hist(fams, "vllm:time_to_first_token_seconds").GetSampleSum(); math.Abs(p-ttft) > 1e-9 || math.Abs(p-0.06) > 1e-9 {
		t.Errorf("fixed mode prefill %v, TTFT %v, want both 3 × 20ms", p, ttft)
	}
	for f, want := range map[float64]string{1: "1.0", 0.001: "0.001", 2560: "2560.0", 100000: "100000.0", 1e6: "1e+06", 2e7: "2e+07", 0.3: "0.3"} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
	if got := build125Buckets(100); !slices.Equal(got, []float64{1, 2, 5, 10, 20, 50, 100}) {
		t.Errorf("build125Buckets(100) = %v", got)
	}
}

// TestFineHistogramBuckets: --histogram-buckets fine keeps every vLLM bound (a query written
// for vLLM's layout still reads it), parses strictly, and has no step above 2^(1/16) from 0.1 ms
// up, so a quantile read from it is within 4.4%; the default layout is vLLM's exactly.
func TestFineHistogramBuckets(t *testing.T) {
	for _, layout := range []string{"vllm", "fine"} {
		c := DefaultConfig()
		c.HistogramBuckets = layout
		s, base := startSim(t, c)
		resp := post(t, base+"/v1/completions", completion(distinct("fine", 20), 8))
		_, _ = readSSE(resp.Body)
		resp.Body.Close()
		fams := parseMetrics(t, getMetrics(t, base), s.modelName)
		for name, vllm := range map[string][]float64{"vllm:time_to_first_token_seconds": ttftBuckets,
			"vllm:inter_token_latency_seconds": itlBuckets, "vllm:request_queue_time_seconds": requestLatencyBuckets} {
			got := bounds(hist(fams, name))
			if layout == "vllm" {
				if !slices.Equal(got, vllm) {
					t.Errorf("%s default bounds %v, want vLLM's %v", name, got, vllm)
				}
				continue
			}
			for _, b := range vllm {
				if !slices.Contains(got, b) {
					t.Errorf("%s fine bounds lack vLLM's %v", name, b)
				}
			}
			for i := 1; i < len(got); i++ {
				if got[i-1] >= 0.0001 && got[i]/got[i-1] > math.Pow(2, 1.0/16)*1.001 {
					t.Errorf("%s: step %v → %v is above 2^(1/16)", name, got[i-1], got[i])
				}
			}
			if got[len(got)-1] != vllm[len(vllm)-1] {
				t.Errorf("%s: top bound %v, want vLLM's %v", name, got[len(got)-1], vllm[len(vllm)-1])
			}
		}
	}
	bad := DefaultConfig()
	bad.HistogramBuckets = "coarse"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--histogram-buckets") {
		t.Errorf("Validate(coarse) = %v, want an error naming --histogram-buckets", err)
	}
}
