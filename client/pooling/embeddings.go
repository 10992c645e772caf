package pooling

import (
	"encoding/json"
	"fmt"

	"servebench/client"
)

// embedBody is the embeddings request: the pieces as a list input, float vectors.
func embedBody(req *client.Request, pieces []string) ([]byte, error) {
	m := map[string]any{"input": pieces, "encoding_format": "float"}
	if req.Model != "" {
		m["model"] = req.Model
	}
	req.Sampling.Extra(m) // e.g. dimensions, truncate; temperature and top_p mean nothing here
	return client.EncodeBody(APIEmbeddings, req, m)
}

// embedAnswer is an embeddings answer: one entry per input, and the usage.
type embedAnswer struct {
	Data *[]struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// embedCheck checks that the answer has exactly one non-empty vector of numbers for each of
// the n inputs (each index once) and reports usage.prompt_tokens.
func embedCheck(data []byte, n int, o client.Observer) *client.Error {
	var a embedAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return client.DecodeError(1, err, data)
	}
	if e := client.ErrorPayload(a.Error, data); e != nil {
		return e
	}
	if a.Data == nil {
		return client.DecodeError(1, fmt.Errorf("answer has no data"), data)
	}
	if len(*a.Data) != n {
		return client.DecodeError(1, fmt.Errorf("%d embeddings for %d inputs", len(*a.Data), n), data)
	}
	seen := make([]bool, n)
	for i, d := range *a.Data {
		var vec []float64
		if err := json.Unmarshal(d.Embedding, &vec); err != nil || len(vec) == 0 {
			return client.DecodeError(1, fmt.Errorf("data[%d].embedding is not a list of numbers", i), data)
		}
		k := i
		if d.Index != nil {
			k = *d.Index
		}
		if k < 0 || k >= n || seen[k] {
			return client.DecodeError(1, fmt.Errorf("data[%d].index %d is out of range or repeated", i, k), data)
		}
		seen[k] = true
	}
	return reportPrompt(a.Usage, o, data)
}

// reportPrompt reports a usage block's prompt_tokens, refusing a count out of range.
func reportPrompt(u *struct {
	PromptTokens int `json:"prompt_tokens"`
}, o client.Observer, data []byte) *client.Error {
	if u == nil {
		return nil
	}
	if u.PromptTokens < 0 || u.PromptTokens > client.MaxTokenCount {
		return client.DecodeError(1, fmt.Errorf("usage.prompt_tokens = %d is not a token count", u.PromptTokens), data)
	}
	if u.PromptTokens > 0 {
		o.Usage(u.PromptTokens, 0)
	}
	return nil
}
