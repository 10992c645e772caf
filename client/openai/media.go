package openai

import (
	"encoding/base64"

	"servebench/client"
	"servebench/workload"
)

// withMedia returns the chat messages of req with its media appended, as content parts, to
// the last user message: its text first as a "text" part, then each image as an "image_url"
// part holding a data: URL (data:image/png;base64,…) and each clip as an "input_audio" part
// ({"data": base64, "format": "wav"}), the shapes vLLM, SGLang and OpenAI accept. The text
// goes first (as vLLM's bench serve puts it), so that each request's prompt begins with its
// own text.
func withMedia(req *client.Request, msgs any) any {
	var list []map[string]any
	switch m := msgs.(type) {
	case []map[string]string:
		for _, x := range m {
			list = append(list, map[string]any{"role": x["role"], "content": x["content"]})
		}
	case []workload.Message:
		for _, x := range m {
			list = append(list, map[string]any{"role": x.Role, "content": x.Content})
		}
	}
	last := -1
	for i, m := range list {
		if m["role"] == "user" {
			last = i
		}
	}
	if last < 0 {
		list = append(list, map[string]any{"role": "user", "content": ""})
		last = len(list) - 1
	}
	parts := make([]any, 0, len(req.MediaData)+1)
	if text, _ := list[last]["content"].(string); text != "" {
		parts = append(parts, map[string]any{"type": "text", "text": text})
	}
	for _, r := range req.MediaData {
		parts = append(parts, mediaPart(r))
	}
	list[last]["content"] = parts
	return list
}

// mediaPart is one image or audio content part.
func mediaPart(r workload.Rendered) map[string]any {
	b64 := base64.StdEncoding.EncodeToString(r.Data)
	if r.Type == workload.MediaAudio {
		return map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": b64, "format": r.Format}}
	}
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:" + r.MIME() + ";base64," + b64}}
}
