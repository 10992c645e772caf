package openai

import (
	"bytes"
	"fmt"
	"testing"
)

// scanSeeds are payloads the fast path must take (servers' real chunk shapes) followed by
// edge cases it must either decode exactly as encoding/json does or hand over to it.
var scanSeeds = []string{
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \""}}]},"logprobs":null,"finish_reason":"abort"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":64,"completion_tokens":1,"total_tokens":65,"prompt_tokens_details":{"cached_tokens":48,"audio_tokens":null}}}`,
	`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"reasoning_content":"think"}}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":0}}}`,
	`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":128,"total_tokens":133,"completion_tokens_details":{"reasoning_tokens":100,"audio_tokens":null}}}`,
	`{"choices":[{"text":"","finish_reason":"length"}],"timings":{"predicted_ms":12.5,"n":[1,2,{"a":true}]}}`,
	`{"error":{"message":"boom","code":500}}`,
	`{"object":"error","message":"bad"}`,
	`{"choices":[null,{"delta":null}],"error":null,"timings":null,"object":null}`,
	`{"choices":[{"text":"\u00e9\n\"x\""}],"x":-0.5e+10,"y":[true,false,null]}`,
	// encoding/json territory: must fall back (or agree)
	`{"Choices":[{"text":"a"}]}`, `{"choices":[{"TEXT":"a"}]}`, `{"usage":{"prompt_tokens":1.0}}`,
	`{"usage":{"prompt_tokens":1e2}}`, `{"choices":[],"choices":[{"text":"a"}]}`, `{"ch\u006fices":[]}`,
	`{"usage":{"prompt_tokens":99999999999999999999}}`, `{"choices":{}}`, `null`, `[]`, `{"a":01}`,
	`{"a":"\x01"}`, `{"a":tru}`, `{"a":1}x`, `{"a":[1,]}`, `{"a":"\q"}`, `{"usage":"x"}`, `{"choices":[1]}`,
	`{"choices":[{"delta":"x"}]}`, `{"object":"\u0065rror"}`, `{"text":"x"}`, "{\"a\":\"\xff\"}",
	`{"choices":[{"delta":{"tool_calls":[ ],"Tool_Calls":[1]}}]}`, `{"choices":[{"delta":{"tool_calls":{}},"finish_reason":"\u0061bort"}]}`,
	`{"choices":[{"delta":{"tool_calls":[],"tool_calls":[1]}}]}`, `{"usage":{"completion_tokens":-5}}`,
	`{"usage":{"completion_tokens_details":{"reasoning_tokens":null}}}`, `{"usage":{"completion_tokens_details":{"Reasoning_Tokens":2}}}`,
	`{"usage":{"completion_tokens_details":{"reasoning_tokens":-2}}}`, `{"usage":{"completion_tokens_details":[]}}`,
}

// TestFastPathTaken checks that real chunk shapes do not silently fall back to encoding/json.
func TestFastPathTaken(t *testing.T) {
	payloads := append([]string{}, scanSeeds[:10]...)
	for _, ev := range benchEvents {
		payloads = append(payloads, ev)
	}
	for _, p := range payloads {
		var d decoder
		d.resetChunk()
		if !d.fast([]byte(p)) {
			t.Errorf("fast path refused %s", p)
		}
	}
}

// FuzzFastDecode checks the fast path against encoding/json, the oracle: whenever the
// scanner accepts a payload, encoding/json must accept it too and decode the same facts.
func FuzzFastDecode(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	for _, ev := range benchEvents {
		f.Add([]byte(ev))
	}
	// a case-folded twin of a known key: the fast path must refuse it (encoding/json matches it)
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens_details":null,"Prompt_Tokens_Details":{"cached_tokens":2}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		var fast, slow decoder
		fast.resetChunk()
		if !fast.fast(data) {
			return
		}
		slow.resetChunk()
		if err := slow.unmarshal(data); err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
		}
		if a, b := describeChunk(&fast.c), describeChunk(&slow.c); a != b {
			t.Fatalf("fast %s\njson %s\nfor %q", a, b, data)
		}
	})
}

// describeChunk renders the decoded facts of c, ignoring buffer capacity and nil vs empty.
func describeChunk(c *chunk) string {
	raw := func(r rawValue) string {
		if !r.set {
			return "-"
		}
		return string(r.b)
	}
	return fmt.Sprintf("choices=%+v usage=%+v error=%s object=%v timings=%s",
		append([]choice{}, c.Choices...), c.Usage, raw(c.Error), c.Object, raw(c.Timings))
}
