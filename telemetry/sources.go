package telemetry

import (
	"strings"

	"servebench/conditions"
)

// DefaultSource is the Prometheus endpoint of a server family at base (its API's base URL),
// and a note when there is none to scrape by default:
//
//   - the simulator, vLLM, SGLang and TGI serve /metrics beside their API;
//   - llama.cpp serves /metrics only when started with --metrics (tried; dropped with a note
//     when it answers an error);
//   - Triton serves its metrics on another port (:8002/metrics), which cannot be guessed
//     behind a proxy: only an explicit --scrape URL scrapes it;
//   - Ollama has no Prometheus endpoint.
//
// family is the server.family condition ("" when undetected), api the --api in use.
func DefaultSource(family, api, base string) (Source, string, bool) {
	base = strings.TrimRight(base, "/")
	switch {
	case family == conditions.SimFamily, family == conditions.VLLM, family == conditions.SGLang,
		family == conditions.TGI, family == conditions.LlamaCpp:
		return Source{URL: base + "/metrics", Default: true}, "", true
	case family == conditions.Ollama || api == "ollama":
		return Source{}, "telemetry: Ollama has no Prometheus endpoint: no server telemetry (--scrape URL adds one)", false
	case api == "triton":
		return Source{}, "telemetry: Triton serves metrics on its metrics port, e.g. --scrape http://HOST:8002/metrics", false
	case api == "tgi", api == "sglang", api == "llamacpp":
		return Source{URL: base + "/metrics", Default: true}, "", true
	}
	return Source{}, "telemetry: the server's family is unknown: no default endpoint (--scrape URL names one)", false
}
