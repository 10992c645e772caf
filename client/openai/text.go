package openai

import (
	"encoding/json"
	"strings"

	"servebench/client"
)

// textChunk is the answer text of a streamed chunk: completions' text, chat's delta.content.
// Reasoning fields are left out: a score or a schema check is about the answer.
type textChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

// passText reports the answer text of the event data to the observer when it wants text
// (asked at a stream's first event). The fast decoder keeps no text, so a run that wants it
// decodes each event a second time: only runs that score answers pay for it.
func (d *decoder) passText(data []byte, o client.Observer) {
	if d.events == 1 {
		d.textTo, _ = client.WantsText(o)
	}
	if d.textTo == nil {
		return
	}
	var c textChunk
	if json.Unmarshal(data, &c) != nil {
		return // the event decoded once already; a second decoder that disagrees adds nothing
	}
	var b strings.Builder
	for _, ch := range c.Choices {
		b.WriteString(ch.Text)
		b.WriteString(ch.Delta.Content)
	}
	if b.Len() > 0 {
		d.textTo.Text(b.String())
	}
}
