package sim

import (
	"math"
	"strconv"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestSpecProb: the per-position probability solved from α gives α back, at the edges too.
func TestSpecProb(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	for _, k := range []int{1, 3, 5} {
		for _, a := range []float64{0, 0.2, 0.5, 0.7, 0.95, 1} {
			p := specProb(k, a)
			sum, pj := 0.0, 1.0
			for range k {
				pj *= p
				sum += pj
			}
			if got := sum / float64(k); math.Abs(got-a) > 1e-9 {
				t.Errorf("k=%d α=%v: p=%v gives %v", k, a, p, got)
			}
		}
	}
}

// specFamilies are the spec-decode counters with speculative decoding on.
var specFamilies = []string{"vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
	"vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total"}

// TestSpecDecode: with k=3 and α=0.6 the engine emits several tokens per step as one event
// each, the counters' acceptance rate is within 1% of α, the per-position counts fall with
// position and add up to the accepted count, and every step's tokens reach the client.
func TestSpecDecode(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := DefaultConfig()
	c.Addr = "127.0.0.1:0"
	c.SpecTokens, c.SpecAcceptance = 3, 0.6
	s, base := startSim(t, c)
	var mu sync.Mutex
	var events, tokens, multi int
	s.SetTruth(func(ev TruthEvent) {
		if ev.Kind != "content" {
			return
		}
		mu.Lock()
		events++
		tokens += ev.Tokens
		if ev.Tokens > 1 {
			multi++
		}
		mu.Unlock()
	})
	const n, out = 6, 150
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, base+"/v1/completions", completion(distinct("s"+strconv.Itoa(i), 20), out))
			readSSE(resp.Body) //nolint:errcheck // counted through the truth hook
			resp.Body.Close()
		}()
	}
	wg.Wait()
	fams := parseMetrics(t, getMetrics(t, base), s.modelName)
	drafts, draftTok, acc := counter(fams, specFamilies[0]), counter(fams, specFamilies[1]), counter(fams, specFamilies[2])
	if drafts == 0 || draftTok != 3*drafts {
		t.Fatalf("drafts %v, draft tokens %v: want 3 per draft", drafts, draftTok)
	}
	if rate := acc / draftTok; math.Abs(rate-0.6) > 0.006 {
		t.Errorf("acceptance rate %v from the counters, want 0.6 within 1%%", rate)
	}
	var perPos []float64
	for _, m := range fams[specFamilies[3]].GetMetric() {
		perPos = append(perPos, m.GetCounter().GetValue())
		if got := labelOf(m, "position"); got != strconv.Itoa(len(perPos)-1) {
			t.Errorf("per-position series %d has position %q", len(perPos)-1, got)
		}
	}
	if len(perPos) != 3 || perPos[0] < perPos[1] || perPos[1] < perPos[2] || perPos[0]+perPos[1]+perPos[2] != acc {
		t.Errorf("per position %v, accepted %v: want 3 falling counts adding up", perPos, acc)
	}
	mu.Lock()
	defer mu.Unlock()
	if tokens != n*out || multi == 0 {
		t.Errorf("content events carried %d tokens (want %d), %d of %d events with more than one", tokens, n*out, multi, events)
	}
	// at most one event per step: each request's first event is its prefill's one token, and
	// each draft's 1+a tokens are one event (fewer when a busy handler falls behind and
	// writes several steps' tokens in one event, up to k+1 tokens each)
	if events > n+int(drafts) || events < n+int(drafts)/4 {
		t.Errorf("%d content events for %d requests and %v drafts", events, n, drafts)
	}
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestSpecDecodeFixedMode: fixed mode draws the same way, one event per ITL tick.
func TestSpecDecodeFixedMode(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing

	c := fixedConfig(1e6, 1e5) // 1 ms, 0.1 ms
	c.SpecTokens, c.SpecAcceptance = 4, 0.8
	s, base := startSim(t, c)
	resp := post(t, base+"/v1/completions", completion("hello there", 2000))
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, evs)
	fams := parseMetrics(t, getMetrics(t, base), s.modelName)
	acc, draftTok := counter(fams, specFamilies[2]), counter(fams, specFamilies[1])
	if rate := acc / draftTok; math.Abs(rate-0.8) > 0.008 {
		t.Errorf("acceptance rate %v, want 0.8 within 1%%", rate)
	}
	if len(d.content) >= 1500 {
		t.Errorf("%d content events for 2000 tokens: want several tokens per event", len(d.content))
	}
}

// TestSpecDecodeOff: no spec_decode family without speculative decoding (as vLLM).
func TestSpecDecodeOff(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	s, base := startSim(t, fixedConfig(1e6, 1e5))
	fams := parseMetrics(t, getMetrics(t, base), s.modelName)
	for _, f := range specFamilies {
		if fams[f] != nil {
			t.Errorf("%s exported with speculative decoding off", f)
		}
	}
}

// TestSpecConfigErrors: out-of-range settings name their flag.
func TestSpecConfigErrors(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	for _, c := range []struct {
		k int
		a float64
	}{{-1, 0.5}, {65, 0.5}, {3, 1.5}, {3, -0.1}, {3, math.NaN()}} {
		cfg := DefaultConfig()
		cfg.SpecTokens, cfg.SpecAcceptance = c.k, c.a
		if err := cfg.Validate(); err == nil {
			t.Errorf("k=%d α=%v accepted", c.k, c.a)
		}
	}
}
