package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The pooling routes: POST /v1/embeddings (OpenAI's shape, as vLLM and llama.cpp
// --embeddings serve it) and POST /v1/rerank (llama.cpp --reranking's and vLLM's shape).
// Their cost is prefill only: each input (each query and document pair, for rerank) is one
// sequence of its prompt tokens that the engine prefills beside the generating ones, in
// the same batches and under the same limits, and that finishes when its prefill does (the
// token sampled then is never sent). The answer is written once every sequence of the
// request has finished. Vectors and scores are drawn from each input's text hash, so a
// replay gets the same. Faults: the HTTP faults answer with their status; slow_headers
// delays the answer; the others are stream shapes and do nothing here.

// embedDims is the length of the simulator's embedding vectors (a small sentence model's).
const embedDims = 384

// poolInput is one sequence of a pooling request: its text, to count and hash.
type poolInput struct {
	text   string
	tokens int
}

// handleEmbeddings serves POST /v1/embeddings.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	s.pool(w, r, "embd-sim-", &req, func() (string, []poolInput, error) {
		if req.EncodingFormat != "" && req.EncodingFormat != "float" {
			return "", nil, fmt.Errorf("encoding_format %q: the simulator sends float only", req.EncodingFormat)
		}
		texts, err := embedInputs(req.Input)
		if err != nil {
			return "", nil, err
		}
		in := make([]poolInput, len(texts))
		for i, t := range texts {
			in[i] = poolInput{text: t}
		}
		return req.Model, in, nil
	}, func(b []byte, in []poolInput, prompt int) []byte {
		b = append(b, `{"object":"list","data":[`...)
		for i, x := range in {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"object":"embedding","index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"embedding":`...)
			b = appendVector(b, hashPrompt(x.text, 0, s.cfg.Seed))
			b = append(b, '}')
		}
		b = append(b, `],"model":`...)
		b = appendJSONString(b, s.modelName)
		return appendPoolUsage(b, prompt)
	})
}

// embedInputs reads "input": a string or a non-empty list of non-empty strings.
func embedInputs(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return checkTexts("input", []string{one})
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("input must be a string or a list of strings")
	}
	return checkTexts("input", list)
}

// checkTexts refuses an empty list or an empty text, as OpenAI's API does.
func checkTexts(field string, texts []string) ([]string, error) {
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s must not be empty", field)
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("%s[%d] must not be empty", field, i)
		}
	}
	return texts, nil
}

// handleRerank serves POST /v1/rerank: every document is scored as the pair (query,
// document), one sequence each; the results are sorted by score, best first, and cut to
// top_n.
func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		TopN      *int     `json:"top_n"`
	}
	s.pool(w, r, "rerank-sim-", &req, func() (string, []poolInput, error) {
		if strings.TrimSpace(req.Query) == "" {
			return "", nil, errors.New("query must not be empty")
		}
		if _, err := checkTexts("documents", req.Documents); err != nil {
			return "", nil, err
		}
		if req.TopN != nil && *req.TopN < 1 {
			return "", nil, fmt.Errorf("top_n must be at least 1, got %d", *req.TopN)
		}
		in := make([]poolInput, len(req.Documents))
		for i, d := range req.Documents {
			in[i] = poolInput{text: req.Query + " " + d}
		}
		return req.Model, in, nil
	}, func(b []byte, in []poolInput, prompt int) []byte {
		type scored struct {
			i     int
			score float64
		}
		res := make([]scored, len(in))
		for i, x := range in {
			res[i] = scored{i, float64(mix64(hashPrompt(x.text, 0, s.cfg.Seed))>>11) / (1 << 53)}
		}
		slices.SortStableFunc(res, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
		if req.TopN != nil && *req.TopN < len(res) {
			res = res[:*req.TopN]
		}
		b = append(b, `{"model":`...)
		b = appendJSONString(b, s.modelName)
		b = append(b, `,"object":"list","results":[`...)
		for k, x := range res {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(x.i), 10)
			b = append(b, `,"relevance_score":`...)
			b = strconv.AppendFloat(b, x.score, 'f', 6, 64)
			b = append(b, '}')
		}
		b = append(b, ']')
		return appendPoolUsage(b, prompt)
	})
}

// appendPoolUsage closes a pooling answer with its usage (prompt tokens only).
func appendPoolUsage(b []byte, prompt int) []byte {
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	return append(b, "}}"...)
}

// appendVector appends a unit vector of embedDims numbers drawn from seed.
func appendVector(b []byte, seed uint64) []byte {
	v := make([]float64, embedDims)
	var norm float64
	for i := range v {
		seed = mix64(seed + uint64(i))
		v[i] = float64(int64(seed>>11)-(1<<52)) / (1 << 52)
		norm += v[i] * v[i]
	}
	norm = math.Sqrt(norm)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x/norm, 'f', 6, 32)
	}
	return append(b, ']')
}

// pool runs a pooling request: decode the body into req, let parse validate it and give
// its inputs, admit one prefill-only sequence per input, wait for all, and write the answer
// render builds. Errors are OpenAI-style.
func (s *Server) pool(w http.ResponseWriter, r *http.Request, prefix string, req any,
	parse func() (string, []poolInput, error), render func([]byte, []poolInput, int) []byte) {
	arrival := time.Now()
	id := s.poolID(r, prefix)
	fault, err := s.arrive(w, r, id)
	if err != nil {
		writeError(w, http.StatusBadRequest, "X-Sim-Fault: "+err.Error())
		return
	}
	if err := json.NewDecoder(r.Body).Decode(req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid JSON body: %v", err))
		return
	}
	model, in, err := parse()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if _, ok := s.resolveModel(model); !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("the model `%s` does not exist", model))
		return
	}
	prompt := 0
	for i := range in {
		in[i].tokens = max(countTokens(in[i].text), 1)
		if in[i].tokens > s.maxModelLen() {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("input %d has %d tokens; this model's maximum context length is %d tokens", i, in[i].tokens, s.maxModelLen()))
			return
		}
		if s.model != nil && in[i].tokens+1 > s.model.kvCapacity {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("input %d needs %d tokens of KV cache but the simulated cache holds %d (--kv-cache-tokens)", i, in[i].tokens+1, s.model.kvCapacity))
			return
		}
		prompt += in[i].tokens
	}
	if st := faultStatus(fault.Kind); st != 0 {
		s.failFast(w, id, st)
		return
	}
	if !s.prefill(r.Context(), w, id, arrival, in) {
		return
	}
	if fault.Kind == FaultSlowHeaders {
		sleepCtx(r.Context(), fault.Delay)
	}
	w.Header().Set("Content-Type", "application/json")
	b := render(make([]byte, 0, 1024), in, prompt)
	began := time.Now()
	w.WriteHeader(http.StatusOK)
	w.Write(b) //nolint:errcheck // nothing to do if the client left
	s.truth([]TruthEvent{{RequestID: id, Kind: "response"}}, began, time.Now())
}

// prefill admits one sequence per input and waits until every one has been prefilled;
// false when the request was answered (engine full) or the client left.
func (s *Server) prefill(ctx context.Context, w http.ResponseWriter, id string, arrival time.Time, in []poolInput) bool {
	qs := make([]*seq, 0, len(in))
	defer func() {
		for _, q := range qs {
			s.finishSeq(q, "stop")
		}
	}()
	for i, x := range in {
		q := newSeq(id+"-"+strconv.Itoa(i), x.tokens, 1, 1, hashPrompt(x.text, 0, s.cfg.Seed), arrival)
		q.times.maxTokens = 1
		if err := s.eng.add(q, ctx.Done()); err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return false
		}
		qs = append(qs, q)
	}
	for _, q := range qs {
		for !q.finished.Load() {
			if _, _, ok := s.waitTokens(ctx, q); !ok {
				return false
			}
		}
	}
	return true
}

// poolID is the client's X-Request-Id (one line, trimmed) or a fresh id.
func (s *Server) poolID(r *http.Request, prefix string) string {
	if id := strings.TrimSpace(r.Header.Get("X-Request-Id")); id != "" && !strings.ContainsAny(id, "\r\n") {
		return id
	}
	return prefix + strconv.FormatUint(s.nextID.Add(1), 10)
}
