package sim

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

type embedAnswer struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		Prompt int `json:"prompt_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func embed(t *testing.T, base string, body map[string]any) (int, embedAnswer) {
	t.Helper()
	resp := post(t, base+"/v1/embeddings", body)
	defer resp.Body.Close()
	var a embedAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, a
}

// TestEmbeddings: one unit vector per input, the same for the same text, and the prompt
// tokens of all inputs in the usage; bad inputs are 400s.
func TestEmbeddings(t *testing.T) {
	_, base := startSim(t, fixedConfig(0, 0))
	inputs := []any{words(5), words(12), words(5)}
	st, a := embed(t, base, map[string]any{"input": inputs})
	if st != 200 || len(a.Data) != 3 || a.Usage.Prompt != 2*countTokens(words(5))+countTokens(words(12)) {
		t.Fatalf("status %d, %d vectors, usage %d", st, len(a.Data), a.Usage.Prompt)
	}
	for i, d := range a.Data {
		var norm float64
		for _, x := range d.Embedding {
			norm += x * x
		}
		if d.Index != i || len(d.Embedding) != embedDims || math.Abs(norm-1) > 1e-3 {
			t.Errorf("vector %d: index %d, %d dims, norm² %.4f", i, d.Index, len(d.Embedding), norm)
		}
	}
	if a.Data[0].Embedding[0] != a.Data[2].Embedding[0] || a.Data[0].Embedding[0] == a.Data[1].Embedding[0] {
		t.Error("vectors are not a function of the text")
	}
	if st, one := embed(t, base, map[string]any{"input": "one text"}); st != 200 || len(one.Data) != 1 {
		t.Errorf("a string input: %d, %d vectors", st, len(one.Data))
	}
	for _, bad := range []any{[]any{}, []any{"ok", ""}, 7, nil} {
		if st, a := embed(t, base, map[string]any{"input": bad}); st != 400 || a.Error == nil {
			t.Errorf("input %v: status %d", bad, st)
		}
	}
}

// TestRerank: every document scored, best first, cut to top_n; each pair (query, document)
// counted in the usage.
func TestRerank(t *testing.T) {
	_, base := startSim(t, fixedConfig(0, 0))
	docs := []any{"alpha beta", "gamma delta epsilon", "zeta", "eta theta"}
	resp := post(t, base+"/v1/rerank", map[string]any{"query": "which one", "documents": docs, "top_n": 3})
	defer resp.Body.Close()
	var a struct {
		Results []struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		} `json:"results"`
		Usage struct {
			Prompt int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || len(a.Results) != 3 {
		t.Fatalf("%v: %+v", err, a)
	}
	for i := 1; i < len(a.Results); i++ {
		if a.Results[i].Score > a.Results[i-1].Score {
			t.Errorf("results not best first: %+v", a.Results)
		}
	}
	want := 0
	for _, d := range docs {
		want += countTokens("which one " + d.(string))
	}
	if a.Usage.Prompt != want {
		t.Errorf("usage %d, want %d", a.Usage.Prompt, want)
	}
	for _, bad := range []map[string]any{{"query": "", "documents": docs}, {"query": "q", "documents": []any{}},
		{"query": "q", "documents": docs, "top_n": 0}} {
		r := post(t, base+"/v1/rerank", bad)
		r.Body.Close()
		if r.StatusCode != 400 {
			t.Errorf("%v: status %d", bad, r.StatusCode)
		}
	}
}

// TestPoolingCostsPrefill: in the engine model a pooling request costs its prefill. A busy
// machine can only make a request slower than the model says, never faster, so the check is
// a lower bound: 8 inputs of 2,000 words take at least half the roofline's time to prefill
// them one by one (batched they share the weight reads, hence the margin).
func TestPoolingCostsPrefill(t *testing.T) {
	c := DefaultConfig()
	c.Addr = "127.0.0.1:0"
	s, base := startSim(t, c)
	in := make([]any, 8)
	var model time.Duration
	for i := range in {
		text := words(2000) + " " + strings.Repeat("x", i+1)
		in[i] = text
		model += s.PrefillStep(countTokens(text), 0)
	}
	fastest := time.Hour
	for range 3 {
		start := time.Now()
		if st, _ := embed(t, base, map[string]any{"input": in}); st != 200 {
			t.Fatalf("status %d", st)
		}
		fastest = min(fastest, time.Since(start))
	}
	if model <= 0 || fastest < model/2 {
		t.Errorf("8 inputs of 2000 words took %v at best; the roofline's prefill of them is %v", fastest, model)
	}
}
