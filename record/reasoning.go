package record

// A reasoning model's output has two phases: its thinking (vLLM's and SGLang's reasoning
// parsers stream it as delta.reasoning or delta.reasoning_content) and then its answer
// (delta.content, or a tool call). A Record keeps every event of both in Events, so TTFT
// stays the time to the first generated token of any kind, and marks where the answer
// begins:
//
//   - ReasoningEvents is how many content events came before the first answer event; each
//     of them carried reasoning text only. 0 means the first event already carried answer
//     text: no reasoning was seen (or a file from before these fields).
//   - FirstAnswer is that first answer event's time (Events[ReasoningEvents].T), kept apart
//     so the answer's start survives where events are not kept; 0 with ReasoningEvents > 0
//     means no answer came (the output ended while still reasoning).
//   - ReasoningTokens counts the output's reasoning tokens, a part of OutputTokens, with its
//     source: the server's usage.completion_tokens_details.reasoning_tokens ("server"), the
//     per-event counts of the reasoning events ("events"), or one per reasoning event
//     ("count"). A reasoning-only event after the first answer event (a model that thinks
//     again between answer parts) counts in the answer phase unless the server counts it.

// Answered reports whether the request's answer began (always true without reasoning).
func (r *Record) Answered() bool { return r.ReasoningEvents == 0 || r.FirstAnswer != 0 }
