package sim

import (
	"encoding/json"
	"flag"
	"io"
	"strings"
	"sync"
	"testing"
)

// usageReport is the usage a response reported; details is false when it had no
// prompt_tokens_details.
type usageReport struct {
	prompt, cached int
	details        bool
	text           string
}

// generate sends one request (streaming with include_usage, or not) and returns its usage.
func generate(t *testing.T, base, path string, body map[string]any) usageReport {
	t.Helper()
	resp := post(t, base+path, body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	type usage struct {
		Prompt  int `json:"prompt_tokens"`
		Details *struct {
			Cached *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	var r usageReport
	take := func(u *usage) {
		r.prompt = u.Prompt
		if u.Details != nil && u.Details.Cached != nil {
			r.cached, r.details = *u.Details.Cached, true
		}
	}
	if body["stream"] != true {
		var out struct {
			Choices []struct {
				Text    string                   `json:"text"`
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
			Usage usage `json:"usage"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		take(&out.Usage)
		r.text = out.Choices[0].Text + out.Choices[0].Message.Content
		return r
	}
	evs, err := readSSE(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r.text = decode(t, evs).text
	for _, e := range evs {
		var c struct {
			Choices []json.RawMessage `json:"choices"`
			Usage   *usage            `json:"usage"`
		}
		if json.Unmarshal([]byte(e.data), &c) != nil || c.Usage == nil {
			continue
		}
		if len(c.Choices) > 0 && c.Usage.Details != nil {
			t.Errorf("a continuous usage chunk carries prompt_tokens_details (vLLM leaves them out): %s", e.data)
		}
		take(c.Usage)
	}
	return r
}

func completionOf(prompt string, stream bool) map[string]any {
	b := completion(prompt, 2)
	b["stream"] = stream
	return b
}

// TestPrefixCacheSamePrompt: the second of two equal prompts is served from the cache up
// to the last full block before its last token (vLLM must compute that token to sample).
func TestPrefixCacheSamePrompt(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	for _, tc := range []struct {
		blockSize, prompt, want int
	}{
		{0, 100, 96}, // default 16: 99 tokens may hit, 6 blocks
		{0, 96, 80},  // a whole number of blocks: the last block is recomputed
		{0, 50, 48},
		{32, 50, 32},
		{0, 10, 0}, // shorter than a block
	} {
		c := DefaultConfig()
		c.BlockSize = tc.blockSize
		s, base := startSim(t, c)
		var mu sync.Mutex
		truth := map[string]TruthEvent{} // request id → its first content event
		s.SetTruth(func(ev TruthEvent) {
			mu.Lock()
			defer mu.Unlock()
			if _, seen := truth[ev.RequestID]; !seen && ev.Kind == "content" {
				truth[ev.RequestID] = ev
			}
		})
		p := distinct("s", tc.prompt)
		for i, stream := range []bool{true, true, false} {
			want := tc.want
			if i == 0 {
				want = 0
			}
			u := generate(t, base, "/v1/completions", completionOf(p, stream))
			if !u.details || u.cached != want || u.prompt != tc.prompt {
				t.Errorf("block %d, prompt %d, request %d (stream %v): usage %+v, want %d cached", tc.blockSize, tc.prompt, i, stream, u, want)
			}
		}
		mu.Lock()
		for id, ev := range truth {
			if !ev.hasCached || (ev.CachedTokens != 0 && ev.CachedTokens != tc.want) {
				t.Errorf("truth of %s: first content event %+v, want cached_tokens 0 or %d", id, ev, tc.want)
			}
		}
		if len(truth) != 2 {
			t.Errorf("truth: %d streams' first content events, want 2", len(truth))
		}
		mu.Unlock()
	}
}

// TestPrefixCacheSharedPrefix: prompts sharing P tokens share floor(P/16) blocks, whether
// the prompt comes as text, as the ids /tokenize returns, or as a chat that sends the
// previous reply back (generated tokens are cached too).
func TestPrefixCacheSharedPrefix(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, DefaultConfig())
	prefix := distinct("p", 50)
	generate(t, base, "/v1/completions", completionOf(prefix+" "+distinct("a", 30), true))
	if u := generate(t, base, "/v1/completions", completionOf(prefix+" "+distinct("b", 30), true)); u.cached != 48 {
		t.Errorf("shared 50-token prefix: %d cached, want 48", u.cached)
	}

	var tok struct {
		Tokens []int `json:"tokens"`
	}
	resp := post(t, base+"/tokenize", map[string]any{"prompt": prefix + " " + distinct("c", 20)})
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	ids := completion("", 2)
	ids["prompt"] = tok.Tokens
	if u := generate(t, base, "/v1/completions", ids); u.cached != 48 || u.prompt != 70 {
		t.Errorf("the shared prefix as token ids: usage %+v, want 70 prompt, 48 cached", u)
	}

	// Turn 1 computes 40 prompt and 19 generated tokens (the last one is sampled, never
	// computed): 3 full blocks. Turn 2 sends them back with 10 more tokens.
	user := distinct("u", 40)
	chat := func(msgs ...string) map[string]any {
		var m []map[string]any
		for i, c := range msgs {
			m = append(m, map[string]any{"role": []string{"user", "assistant"}[i%2], "content": c})
		}
		return map[string]any{"messages": m, "max_completion_tokens": 20, "ignore_eos": true, "stream": true,
			"stream_options": map[string]any{"include_usage": true}}
	}
	first := generate(t, base, "/v1/chat/completions", chat(user))
	second := generate(t, base, "/v1/chat/completions", chat(user, first.text, distinct("v", 10)))
	if first.cached != 0 || second.prompt != 70 || second.cached != 48 {
		t.Errorf("multi-turn: turn 1 %+v, turn 2 %+v; want turn 2 70 prompt, 48 cached (prompt and reply)", first, second)
	}
}

// TestPrefixCacheMetrics: vLLM's counters add up to what the responses reported.
func TestPrefixCacheMetrics(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, DefaultConfig())
	x := distinct("x", 100)
	var prompt, cached int
	for _, p := range []string{x, x, x + " " + distinct("y", 30), distinct("z", 40), x} {
		u := generate(t, base, "/v1/completions", completionOf(p, true))
		prompt, cached = prompt+u.prompt, cached+u.cached
	}
	if cached != 96+96+96 {
		t.Errorf("Σ cached %d, want 288", cached)
	}
	m := scrape(t, base)
	if m["vllm:prefix_cache_queries_total"] != float64(prompt) || m["vllm:prefix_cache_hits_total"] != float64(cached) {
		t.Errorf("queries %v hits %v, want %d and %d", m["vllm:prefix_cache_queries_total"], m["vllm:prefix_cache_hits_total"], prompt, cached)
	}
	if r := m["vllm:gpu_prefix_cache_hit_rate"]; r != float64(cached)/float64(prompt) {
		t.Errorf("hit rate %v, want %v", r, float64(cached)/float64(prompt))
	}
}

// TestPrefixCacheOff: --no-prefix-cache reports no cached tokens anywhere.
func TestPrefixCacheOff(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := DefaultConfig()
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	BindFlags(fs, &c)
	if err := fs.Parse([]string{"--no-prefix-cache", "--block-size", "32"}); err != nil || !c.NoPrefixCache || c.BlockSize != 32 {
		t.Fatalf("flags: %+v, %v", c, err)
	}
	s, base := startSim(t, c)
	var carried []TruthEvent
	var mu sync.Mutex
	s.SetTruth(func(ev TruthEvent) {
		mu.Lock()
		defer mu.Unlock()
		if ev.hasCached {
			carried = append(carried, ev)
		}
	})
	p := distinct("o", 100)
	for _, stream := range []bool{true, true, false} {
		if u := generate(t, base, "/v1/completions", completionOf(p, stream)); u.details {
			t.Errorf("cache off: usage %+v carries prompt_tokens_details", u)
		}
	}
	mu.Lock()
	if len(carried) > 0 {
		t.Errorf("cache off: truth carries cached tokens: %+v", carried)
	}
	mu.Unlock()
	if m := scrape(t, base); m["vllm:prefix_cache_queries_total"] != 0 || s.Describe()["prefix_cache"] != "false" {
		t.Errorf("cache off: queries %v, describe %v", m["vllm:prefix_cache_queries_total"], s.Describe()["prefix_cache"])
	}
	bad := DefaultConfig()
	bad.BlockSize = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--block-size") {
		t.Errorf("--block-size -1: %v", err)
	}
}
