package sim

import (
	"bufio"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

func TestInfoEndpoints(t *testing.T) {
	s, base := startSim(t, DefaultConfig())
	var models struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	getJSON(t, base+"/v1/models", &models)
	if len(models.Data) != 1 || models.Data[0].OwnedBy != "servebench-simulator" || models.Data[0].ID != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("/v1/models = %+v", models)
	}
	var version struct {
		Simulator bool              `json:"simulator"`
		Config    map[string]string `json:"config"`
	}
	getJSON(t, base+"/version", &version)
	if !version.Simulator || version.Config["hardware"] != "h100" {
		t.Errorf("/version = %+v", version)
	}
	if st := getJSON(t, base+"/health", nil); st != 200 {
		t.Errorf("/health status %d", st)
	}
	d := s.Describe()
	for k, want := range map[string]string{"simulated": "true", "model_preset": "llama-3.1-8b", "hardware": "h100", "tp": "1", "dtype": "bfloat16", "max_num_seqs": "256"} {
		if d[k] != want {
			t.Errorf("Describe()[%q] = %q, want %q", k, d[k], want)
		}
	}
}

func TestNonStreaming(t *testing.T) {
	_, base := startSim(t, fixedConfig(2*time.Millisecond, time.Millisecond))
	for _, tc := range []struct {
		path string
		body map[string]any
	}{
		{"/v1/completions", map[string]any{"prompt": words(7), "max_tokens": 12, "ignore_eos": true}},
		{"/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": words(7)}}, "max_completion_tokens": 12, "min_tokens": 12}},
	} {
		resp := post(t, base+tc.path, tc.body, "X-Request-Id", "mine-1")
		var out struct {
			ID      string `json:"id"`
			Choices []struct {
				Text         string                   `json:"text"`
				Message      struct{ Content string } `json:"message"`
				FinishReason string                   `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		text := out.Choices[0].Text + out.Choices[0].Message.Content
		if out.ID != "mine-1" || resp.Header.Get("X-Request-Id") != "mine-1" {
			t.Errorf("%s: id %q / header %q, want the client's X-Request-Id", tc.path, out.ID, resp.Header.Get("X-Request-Id"))
		}
		if countTokens(text) != 12 || out.Choices[0].FinishReason != "length" {
			t.Errorf("%s: %d tokens of text, finish %q; want 12, length", tc.path, countTokens(text), out.Choices[0].FinishReason)
		}
		if out.Usage.Prompt != 7 || out.Usage.Completion != 12 {
			t.Errorf("%s: usage %+v, want 7 prompt / 12 completion", tc.path, out.Usage)
		}
	}
}

func TestStreamShapeAndEOS(t *testing.T) {
	_, base := startSim(t, fixedConfig(2*time.Millisecond, time.Millisecond))
	resp := post(t, base+"/v1/completions", completion(words(33), 20), "X-Request-Id", "req-42")
	evs, _ := readSSE(resp.Body)
	resp.Body.Close()
	d := decode(t, evs)
	last := d.chunks[len(d.chunks)-1]
	if len(d.content) != 20 || !d.done || last.Usage == nil || last.Usage.Prompt != 33 || last.Usage.Completion != 20 || len(last.Choices) != 0 {
		t.Fatalf("stream: %d content, done %v, last chunk %+v", len(d.content), d.done, last)
	}
	if fr := d.chunks[len(d.chunks)-2].Choices[0].FinishReason; fr == nil || *fr != "length" {
		t.Errorf("last content chunk finish_reason %v, want length", fr)
	}
	for _, e := range evs {
		if e.data != "[DONE]" && e.id != "req-42" {
			t.Fatalf("SSE id %q, want the request id req-42", e.id)
		}
	}
	// Without ignore_eos the simulated EOS stops at a length fixed by the prompt.
	lengths := map[string]int{}
	for i := range 20 {
		p := words(5) + " " + vocab[i]
		for range 2 {
			r := post(t, base+"/v1/completions", map[string]any{"prompt": p, "max_tokens": 30})
			var out struct {
				Usage struct {
					Completion int `json:"completion_tokens"`
				} `json:"usage"`
			}
			json.NewDecoder(r.Body).Decode(&out)
			r.Body.Close()
			if n, seen := lengths[p]; seen && n != out.Usage.Completion {
				t.Fatalf("prompt %q: lengths %d and %d, want deterministic", p, n, out.Usage.Completion)
			}
			if out.Usage.Completion < 1 || out.Usage.Completion > 30 {
				t.Fatalf("EOS length %d outside [1,30]", out.Usage.Completion)
			}
			lengths[p] = out.Usage.Completion
		}
	}
	short := 0
	for _, n := range lengths {
		if n < 30 {
			short++
		}
	}
	if short < 10 {
		t.Errorf("only %d of 20 prompts stopped early without ignore_eos", short)
	}
}

func TestRequestErrors(t *testing.T) {
	c := DefaultConfig()
	c.KVCacheTokens = 1000
	_, base := startSim(t, c)
	for _, tc := range []struct {
		body map[string]any
		want int
	}{
		{map[string]any{"model": "gpt-9", "prompt": "x"}, 404},
		{map[string]any{"prompt": words(990), "max_tokens": 20}, 400},
		{map[string]any{"prompt": "x", "max_tokens": 0}, 400},
		{map[string]any{"max_tokens": 3}, 400},
	} {
		resp := post(t, base+"/v1/completions", tc.body)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%v: status %d, want %d", tc.body, resp.StatusCode, tc.want)
		}
	}
}

func TestTruthFile(t *testing.T) {
	c := fixedConfig(2*time.Millisecond, time.Millisecond)
	c.TruthFile = filepath.Join(t.TempDir(), "truth.jsonl")
	s, base := startSim(t, c)
	resp := post(t, base+"/v1/completions", completion("x", 6), "X-Request-Id", "t-1")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(c.TruthFile)
	defer f.Close()
	kinds, tokens := []string{}, 0
	var read, lastBegan, lastWritten int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			RequestID string `json:"request_id"`
			Seq       int    `json:"seq"`
			Tokens    int    `json:"tokens"`
			WrittenNs int64  `json:"written_ns"`
			BeganNs   int64  `json:"write_began_ns"`
			ReadNs    int64  `json:"read_ns"`
			Kind      string `json:"kind"`
		}
		err := json.Unmarshal(sc.Bytes(), &ev)
		if err == nil && ev.Kind == "request" && read == 0 && len(kinds) == 0 && ev.RequestID == "t-1" {
			read = ev.ReadNs // the first line: when the request's first bytes were read
			continue
		}
		if err != nil || ev.RequestID != "t-1" || ev.Seq != len(kinds) {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if len(kinds) == 0 && (read == 0 || ev.BeganNs-read < int64(2*time.Millisecond)) {
			t.Errorf("request read at %d, first event's write began at %d: want a read time at least the 2 ms TTFT before", read, ev.BeganNs)
		}
		// each write is bracketed, and one stream's writes follow each other (events of one
		// write share its stamps)
		sameWrite := ev.BeganNs == lastBegan && ev.WrittenNs == lastWritten
		if ev.BeganNs == 0 || ev.BeganNs > ev.WrittenNs || !sameWrite && ev.BeganNs < lastWritten {
			t.Errorf("event %d: write began %d, written %d, the previous write ended %d: want began ≤ written, after the previous write",
				ev.Seq, ev.BeganNs, ev.WrittenNs, lastWritten)
		}
		lastBegan, lastWritten = ev.BeganNs, ev.WrittenNs
		if d := time.Since(time.Unix(0, ev.WrittenNs)); d < 0 || d > time.Minute {
			t.Fatalf("written_ns %d is not a recent unix time", ev.WrittenNs)
		}
		kinds, tokens = append(kinds, ev.Kind), tokens+ev.Tokens
	}
	if strings.Join(kinds, ",") != "content,content,content,content,content,content,usage,done" || tokens != 6 {
		t.Errorf("truth kinds %v tokens %d", kinds, tokens)
	}
}

// TestPresetLive runs the roofline engine in real time with a short workload: ITL close to
// the model's decode step, and a starved KV cache preempts (seen through /metrics).
func TestPresetLive(t *testing.T) {
	c := DefaultConfig()
	c.KVCacheTokens = 600
	s, base := startSim(t, c)
	type res struct{ itl time.Duration }
	out := make(chan res, 8)
	// 8 × (40 + 100) tokens against a 600-token cache: any 5 in flight together overflow it,
	// so preemption happens even when a loaded machine staggers the arrivals
	for range 8 {
		go func() {
			resp := post(t, base+"/v1/completions", completion(words(40), 100))
			evs, _ := readSSE(resp.Body)
			resp.Body.Close()
			d := decode(t, evs)
			if len(d.content) != 100 {
				t.Errorf("%d content events, want 100", len(d.content))
				out <- res{}
				return
			}
			out <- res{d.content[99].at.Sub(d.content[0].at) / 99}
		}()
	}
	var itls []time.Duration
	for range 8 {
		itls = append(itls, (<-out).itl)
	}
	step := s.model.decodeStepTime(8, 60)
	if m := median(itls); m < step*8/10 || m > 10*step {
		t.Errorf("median per-request ITL %v, want near or above the decode step time %v (preemption adds recompute)", m, step)
	}
	metrics := scrape(t, base)
	if metrics["vllm:num_preemptions_total"] < 1 {
		t.Errorf("vllm:num_preemptions_total = %v with 8×140 tokens in a 600-token cache", metrics["vllm:num_preemptions_total"])
	}
	if metrics["vllm:generation_tokens_total"] != 800 || metrics["vllm:prompt_tokens_total"] != 320 {
		t.Errorf("token counters %v / %v, want 800 / 320", metrics["vllm:generation_tokens_total"], metrics["vllm:prompt_tokens_total"])
	}
	if metrics["vllm:time_to_first_token_seconds_count"] != 8 {
		t.Errorf("TTFT histogram count %v, want 8", metrics["vllm:time_to_first_token_seconds_count"])
	}
}

var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$`)

// scrape reads /metrics into name → value (the first series of each name) and checks that
// every line is valid exposition text.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := testClient.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			continue
		}
		m := promLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("bad metrics line %q", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("bad value in %q", line)
		}
		if _, seen := out[m[1]]; !seen {
			out[m[1]] = v
		}
	}
	for _, name := range []string{"servebench_sim_info", "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_cache_usage_perc", "vllm:inter_token_latency_seconds_count"} {
		if _, ok := out[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	return out
}

func TestFlagsAndValidate(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	BindFlags(fs, &c)
	err := fs.Parse([]string{"--hardware", "a100", "--tp", "2", "--ttft", "50ms", "--itl", "5ms",
		"--fault", "http_503=0.1", "--fault", "disconnect:5=0.2", "--fault-rate", "0.05"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Hardware != "a100" || c.TP != 2 || c.TTFT != 50*time.Millisecond || len(c.Faults) != 2 || c.Faults[1].Count != 5 || !c.FixedMode() {
		t.Fatalf("parsed config %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for flagName, mutate := range map[string]func(*Config){
		"--tp":               func(c *Config) { c.TP = 0 },
		"--hardware":         func(c *Config) { c.Hardware = "tpu" },
		"--model-preset":     func(c *Config) { c.ModelPreset = "gpt-5" },
		"--bw-efficiency":    func(c *Config) { c.BWEfficiency = 1.5 },
		"--params":           func(c *Config) { c.Params = 8 },
		"--itl":              func(c *Config) { c.ITL = -time.Second },
		"--addr":             func(c *Config) { c.Addr = "nonsense" },
		"--fault":            func(c *Config) { c.Faults = FaultList{{Fault{Kind: "stall"}, 0.7}, {Fault{Kind: "no_done"}, 0.7}} },
		"--jitter":           func(c *Config) { c.Jitter = time.Millisecond },
		"--max-num-seqs":     func(c *Config) { c.MaxNumSeqs = 0 },
		"--flops-efficiency": func(c *Config) { c.FlopsEfficiency = 0 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flagName) {
			t.Errorf("%s: Validate() = %v, want an error naming the flag", flagName, err)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	c := DefaultConfig()
	c.TP = -1
	if _, err := New(c); err == nil {
		t.Fatal("New accepted --tp -1")
	}
	_ = http.StatusOK
}
