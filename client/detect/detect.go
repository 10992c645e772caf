// Package detect finds which API family a server speaks (--api auto) from the endpoints it
// answers, before a run: each family has a discovery endpoint nobody else serves.
//
// Deprecated: the probes are now part of the registry of API backends; use apis.Detect. This
// package stays as a thin wrapper until its last caller has moved.
package detect

import (
	"context"

	"servebench/client"
	"servebench/client/apis"
	"servebench/client/openai"
)

// Fallback is the API chosen when no native family is recognised: every server we know
// also speaks OpenAI completions (vLLM is recognised this way too).
const Fallback = openai.APICompletions

// API returns the API family of the server at t: "ollama", "tgi", "llamacpp", "sglang",
// "triton", or Fallback. It never fails: a probe that errors is simply not a match. Each
// probe is bounded by two seconds.
//
// Deprecated: use apis.Detect, which it calls.
func API(ctx context.Context, t client.Target) string { return apis.Detect(ctx, t) }
