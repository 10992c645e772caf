package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// cacheResets are the endpoints that empty a server's prefix cache, asked in order: SGLang's,
// then vLLM's (served with VLLM_SERVER_DEV_MODE=1).
var cacheResets = []struct{ server, path string }{{"SGLang", "/flush_cache"}, {"vLLM", "/reset_prefix_cache"}}

// ResetPrefixCache empties the prefix cache of the server at t by the first endpoint it
// serves (a 404 passes on to the next), and returns the one that did it ("POST
// /reset_prefix_cache"). A server with neither is an error naming both; one that refuses
// (SGLang while requests are in flight) is an error with its answer.
func ResetPrefixCache(ctx context.Context, t Target) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, r := range cacheResets {
		req, err := t.NewRequest(ctx, http.MethodPost, r.path, nil)
		if err != nil {
			return "", err
		}
		resp, err := t.Client().Do(req)
		if err != nil {
			return "", err
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 2:
			return "POST " + r.path, nil
		case resp.StatusCode == http.StatusNotFound:
			continue
		}
		return "", fmt.Errorf("POST %s (%s's) answered %s: %s", r.path, r.server, resp.Status, strings.TrimSpace(strings.ToValidUTF8(string(msg), "?")))
	}
	return "", fmt.Errorf("the server has neither SGLang's POST /flush_cache nor vLLM's POST /reset_prefix_cache (vLLM serves it with VLLM_SERVER_DEV_MODE=1)")
}
