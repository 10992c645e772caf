package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// TokenIDs returns the ids the server's tokenizer makes of text, without special tokens, as
// Tokenize asks for them (every dialect in one body). An answer without ids (a bare count) is
// an error; a server without the endpoint gives ErrNoTokenizer.
func TokenIDs(ctx context.Context, t Target, model, text string) ([]int, error) {
	m := map[string]any{"prompt": text, "content": text, "inputs": text, "add_special": false, "add_special_tokens": false}
	if model != "" {
		m["model"] = model
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	err = postJSON(ctx, t, "/tokenize", body, &raw)
	var ce *Error
	if errors.As(err, &ce) && (ce.Status == 404 || ce.Status == 405 || ce.Status == 501) {
		return nil, ErrNoTokenizer
	}
	if err != nil {
		return nil, fmt.Errorf("tokenize: %w", err)
	}
	var list []struct {
		ID int `json:"id"`
	} // TGI: [{"id":..,"text":..}, ...]
	if json.Unmarshal(raw, &list) == nil {
		ids := make([]int, len(list))
		for i, e := range list {
			ids[i] = e.ID
		}
		return ids, nil
	}
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("tokenize: decode answer: %w", err)
	}
	if out.Tokens == nil {
		return nil, errors.New("tokenize: the answer has no token ids")
	}
	return out.Tokens, nil
}
