package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoRAModels: /v1/models lists the base model and each adapter with the base as parent;
// a request names an adapter in its model field; an unknown name is a 404, as in vLLM.
func TestLoRAModels(t *testing.T) {
	c := fixedConfig(time.Millisecond, time.Millisecond)
	if err := c.Adapters.Set("a1,a2=/models/a2,a3"); err != nil {
		t.Fatal(err)
	}
	s, base := startSim(t, c)
	resp, err := testClient.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID, Parent string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || len(list.Data) != 4 || list.Data[0].ID != s.modelName || list.Data[2].ID != "a2" || list.Data[2].Parent != s.modelName {
		t.Fatalf("models %+v (%v): want the base then a1, a2, a3 with it as parent", list.Data, err)
	}
	for model, want := range map[string]int{"a3": 200, s.modelName: 200, "a4": 404} {
		body := completion("hi", 3)
		body["model"] = model
		resp := post(t, base+"/v1/completions", body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("model %q: status %d, want %d (%s)", model, resp.StatusCode, want, b)
		}
		if want == 404 && !bytes.Contains(b, []byte("does not exist")) {
			t.Errorf("404 body %s", b)
		}
	}
	if s.Describe()["lora_modules"] != "a1,a2,a3" {
		t.Errorf("describe lora_modules %q", s.Describe()["lora_modules"])
	}
}

// TestLoRASlots: with one GPU slot, a step admits the head's adapter and the base model's
// requests, defers the other adapter's (vLLM's "deferred" reason), and the step that loads
// an adapter costs the load time once.
func TestLoRASlots(t *testing.T) {
	c := DefaultConfig()
	c.Adapters, c.MaxLoRAs, c.LoadTime = LoRAList{"a", "b"}, 1, 40*time.Millisecond
	m := mustModel(t, c)
	s := newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens)
	s.lora = newLoRASlots(&c)
	var qs []*seq
	for i, a := range []int{1, 2, 0, 1, 2} {
		q := newSeq(strconv.Itoa(i), 50, 10, 1, uint64(i), time.Now())
		q.lora = a
		s.add(q)
		qs = append(qs, q)
	}
	first := s.step()
	if len(s.running) != 3 || len(s.waiting) != 2 || s.waiting[0] != qs[1] || s.waiting[1] != qs[4] {
		t.Fatalf("running %d, waiting %d: want a's two and the base's running, b's two waiting", len(s.running), len(s.waiting))
	}
	if d := s.lora.deferred(s.waiting); d != 2 {
		t.Errorf("deferred %d, want 2", d)
	}
	second := s.step()
	if first-second < 30*time.Millisecond {
		t.Errorf("first step %v, second %v: want the load time on the first only", first, second)
	}
	for range 50 {
		s.step()
	}
	if !s.idle() || s.lora.loads != 2 {
		t.Errorf("idle %v, loads %d: want everything done with a and b loaded once each", s.idle(), s.lora.loads)
	}
}

// TestLoRAFlags: bad adapter lists and slot counts are refused.
func TestLoRAFlags(t *testing.T) {
	var l LoRAList
	for _, bad := range []string{"a,,b", "a,a", "=x"} {
		l = nil
		if err := l.Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c := DefaultConfig()
	c.MaxLoRAs = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--max-loras") {
		t.Errorf("max-loras 0: %v", err)
	}
}

// TestExtraFamilies: the families dashboards query beyond the core ones are there, parse
// strictly, and count what happened: cached prompt tokens, per-request KV computed,
// preemptions, the legacy TPOT histogram equal to the ITL one, failed requests as "error".
func TestExtraFamilies(t *testing.T) {
	c := DefaultConfig()
	c.Addr = "127.0.0.1:0"
	s, base := startSim(t, c)
	prompt := distinct("x", 64)
	for range 2 { // the second finds the first's blocks cached
		resp := post(t, base+"/v1/completions", completion(prompt, 4))
		readSSE(resp.Body) //nolint:errcheck // counted through /metrics
		resp.Body.Close()
	}
	resp := post(t, base+"/v1/completions", completion("boom", 4), "X-Sim-Fault", "http_500")
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("fault status %d", resp.StatusCode)
	}
	body := getMetrics(t, base)
	fams := parseMetrics(t, body, s.modelName)
	if got := counter(fams, "vllm:prompt_tokens_cached_total"); got != 48 { // 3 whole blocks of 16
		t.Errorf("cached prompt tokens %v, want 48", got)
	}
	if h := hist(fams, "vllm:request_prefill_kv_computed_tokens"); h.GetSampleCount() != 2 || h.GetSampleSum() != 64+16 {
		t.Errorf("kv computed: %d requests, sum %v, want 2 and 80", h.GetSampleCount(), h.GetSampleSum())
	}
	if h := hist(fams, "vllm:request_num_preemptions"); h.GetSampleCount() != 2 || h.GetSampleSum() != 0 {
		t.Errorf("num preemptions: %d, sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	if a, b := hist(fams, "vllm:time_per_output_token_seconds"), hist(fams, "vllm:inter_token_latency_seconds"); a.GetSampleCount() != b.GetSampleCount() || a.GetSampleCount() == 0 {
		t.Errorf("legacy TPOT count %d, ITL %d", a.GetSampleCount(), b.GetSampleCount())
	}
	for _, line := range []string{`finished_reason="error"} 1`, `reason="capacity"} 0`, `reason="deferred"} 0`,
		`vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0"`} {
		if !bytes.Contains(body, []byte(line)) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// TestLoRAPrefixCache: the same prompt sent to two adapters shares no cached block; sent
// again to the first, it finds its blocks cached.
func TestLoRAPrefixCache(t *testing.T) {
	c := DefaultConfig()
	c.Addr, c.Adapters = "127.0.0.1:0", LoRAList{"a", "b"}
	_, base := startSim(t, c)
	prompt := distinct("p", 64)
	var cached []int
	for _, model := range []string{"a", "b", "a"} {
		body := completion(prompt, 2)
		body["model"], body["stream"] = model, false
		resp := post(t, base+"/v1/completions", body)
		var r struct {
			Usage struct {
				Details struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		err := json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		cached = append(cached, r.Usage.Details.Cached)
	}
	if cached[0] != 0 || cached[1] != 0 || cached[2] != 48 {
		t.Errorf("cached tokens a, b, a: %v, want 0, 0, 48", cached)
	}
}

// TestLoRAMetrics: with one slot and two adapters busy, /metrics shows one adapter running
// and the other waiting in vllm:lora_requests_info, and the waiting ones as "deferred".
func TestLoRAMetrics(t *testing.T) {
	c := DefaultConfig()
	c.Addr, c.Adapters, c.MaxLoRAs = "127.0.0.1:0", LoRAList{"a", "b"}, 1
	_, base := startSim(t, c)
	// the streams are cancelled once /metrics has shown what is checked: their 300 tokens
	// only keep the adapters busy until then
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	for i, model := range []string{"a", "b", "a", "b"} {
		go func() {
			defer func() { done <- struct{}{} }()
			body := completion(distinct("m"+strconv.Itoa(i), 20), 300)
			body["model"] = model
			b, _ := json.Marshal(body)
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/completions", bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			resp, err := testClient.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("POST: %v", err)
				}
				return
			}
			readSSE(resp.Body) //nolint:errcheck // only /metrics is checked
			resp.Body.Close()
		}()
	}
	seen := false
	for deadline := time.Now().Add(10 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		body := string(getMetrics(t, base))
		seen = strings.Contains(body, `max_lora="1",running_lora_adapters="a",waiting_lora_adapters="b"`) ||
			strings.Contains(body, `max_lora="1",running_lora_adapters="b",waiting_lora_adapters="a"`)
		seen = seen && strings.Contains(body, `reason="deferred"} 2`)
	}
	cancel()
	for range 4 {
		<-done
	}
	if !seen {
		t.Error("never saw one adapter running, the other's two requests deferred")
	}
}
