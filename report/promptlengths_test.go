package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"servebench/metrics"
)

// "prompt lengths exact" beside a server that counts one token more on every prompt (llama.cpp
// counts its BOS: 129 of 128) names that token; a difference that varies, or none, leaves the
// line alone (a varying one is a warning of its own).
func TestPromptLengthsBOS(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra []int // server count − sent length, per measured request, cycled
		want  string
	}{
		{"bos", []int{1}, "prompt lengths exact (+1 BOS the server adds)\n"},
		{"template", []int{5}, "prompt lengths exact (+5 tokens the server adds: BOS, chat template)\n"},
		{"none", []int{0}, "prompt lengths exact\n"},
		{"varying", []int{1, 2}, "prompt lengths exact\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := basicRecords()
			for i := range recs {
				recs[i].PromptTokens = recs[i].InputTokens + c.extra[i%len(c.extra)]
			}
			h := header(false)
			s := summarise(h, metrics.Options{}, recs)
			var b bytes.Buffer
			if err := Text(&b, h, s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), c.want) {
				t.Errorf("want %q in:\n%s", c.want, b.String())
			}
			var hb bytes.Buffer
			if err := HTML(&hb, h, s, nil); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(html.UnescapeString(hb.String()), strings.TrimSuffix(c.want, "\n")) {
				t.Errorf("html lacks %q", c.want)
			}
		})
	}
}
