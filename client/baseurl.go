package client

import (
	"net/url"
	"strings"
)

// apiPaths are the endpoint paths users paste with a server's address, as segment lists,
// longest first: the paths the backends in this module send to (and the paths servers
// document as "base URLs", like OpenAI's /v1), and the probe and scrape paths. A path prefix
// that is none of these (a reverse proxy's /llama) is part of the base and kept.
var apiPaths = [][]string{
	{"v1", "chat", "completions"}, {"v1", "completions"}, {"v1", "responses"}, {"v1", "messages"},
	{"v1", "embeddings"}, {"v1", "rerank"}, {"v1", "models"}, {"v1"},
	{"api", "generate"}, {"api", "chat"}, {"api", "version"}, {"api", "tags"}, // Ollama
	{"generate_stream"}, {"generate"}, // TGI, SGLang
	{"completion"}, // llama.cpp's native API
	{"health"}, {"metrics"}, {"props"}, {"get_model_info"}, {"tokenize"},
}

// APIBase splits a URL a user gave into the server's base URL and the API path it ended
// with: "http://h:8000/v1/chat/completions" is "http://h:8000" and "/v1/chat/completions",
// "http://h/llama/v1" is "http://h/llama" and "/v1". Triton's KServe v2 paths
// (/v2/models/NAME/generate_stream, /v2/health/ready) go from their /v2 on. Every request,
// probe and scrape is sent to a path under the base, so a URL ending in an API path would
// send them to /v1/chat/completions/health and the like. A URL that does not parse, or whose
// path is no API path, is returned as it is (without trailing slashes) and dropped is "".
func APIBase(raw string) (base, dropped string) {
	base = strings.TrimRight(raw, "/")
	u, err := url.Parse(base)
	if err != nil || u.Path == "" || u.RawQuery != "" || u.Fragment != "" {
		return base, ""
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	cut := apiCut(segs)
	if cut < 0 {
		return base, ""
	}
	dropped = "/" + strings.Join(segs[cut:], "/")
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), dropped)
	u.RawPath = ""
	return strings.TrimRight(u.String(), "/"), dropped
}

// apiCut is the index of the first segment of the API path segs ends with, or -1.
func apiCut(segs []string) int {
	for i := range len(segs) - 1 {
		if segs[i] == "v2" && (segs[i+1] == "models" || segs[i+1] == "health") {
			return i
		}
	}
	for _, p := range apiPaths {
		if len(p) <= len(segs) && equalFold(segs[len(segs)-len(p):], p) {
			return len(segs) - len(p)
		}
	}
	return -1
}

func equalFold(a, b []string) bool {
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}
