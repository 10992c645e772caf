package pooling

import (
	"encoding/json"
	"fmt"
	"math"

	"servebench/client"
)

// rerankBody is the rerank request: the first piece is the query, the others the
// documents, and top_n asks for a score for every document.
func rerankBody(req *client.Request, pieces []string) ([]byte, error) {
	docs := pieces[1:]
	if len(docs) == 0 { // one word of prompt: it is both the query and the only document
		docs = pieces
	}
	m := map[string]any{"query": pieces[0], "documents": docs, "top_n": len(docs)}
	if req.Model != "" {
		m["model"] = req.Model
	}
	req.Sampling.Extra(m)
	return client.EncodeBody(APIRerank, req, m)
}

// rerankAnswer is a rerank answer: llama.cpp, vLLM, Jina and Cohere all send "results" of
// {index, relevance_score}.
type rerankAnswer struct {
	Results *[]struct {
		Index *int     `json:"index"`
		Score *float64 `json:"relevance_score"`
	} `json:"results"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// rerankCheck checks that the answer scores between one and n of the n documents, each
// index once and in range, each score a finite number, and reports usage.prompt_tokens.
func rerankCheck(data []byte, n int, o client.Observer) *client.Error {
	var a rerankAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return client.DecodeError(1, err, data)
	}
	if e := client.ErrorPayload(a.Error, data); e != nil {
		return e
	}
	if a.Results == nil || len(*a.Results) == 0 || len(*a.Results) > n {
		got := 0
		if a.Results != nil {
			got = len(*a.Results)
		}
		return client.DecodeError(1, fmt.Errorf("%d results for %d documents", got, n), data)
	}
	seen := make([]bool, n)
	for i, r := range *a.Results {
		if r.Index == nil || *r.Index < 0 || *r.Index >= n || seen[*r.Index] {
			return client.DecodeError(1, fmt.Errorf("results[%d].index is missing, out of range or repeated", i), data)
		}
		if r.Score == nil || math.IsNaN(*r.Score) || math.IsInf(*r.Score, 0) {
			return client.DecodeError(1, fmt.Errorf("results[%d].relevance_score is not a number", i), data)
		}
		seen[*r.Index] = true
	}
	return reportPrompt(a.Usage, o, data)
}
