package workload

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// words is n distinct words of text, numbered from first (each "w<number> ").
func words(first, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%d ", first+i)
	}
	return b.String()
}

func TestRepeats(t *testing.T) {
	prefix := words(0, 200) // 1,090 bytes: 17 whole blocks and a part
	p := func(s string) Request { return Request{Prompt: s} }
	chat := func(ms ...string) Request {
		r := Request{}
		for i, m := range ms {
			r.Messages = append(r.Messages, Message{Role: []string{"user", "assistant"}[i%2], Content: m})
		}
		return r
	}
	cases := []struct {
		name string
		reqs []Request
		want []float64 // -1: any share under one block's worth
	}{
		{"distinct", []Request{p(words(0, 50)), p(words(100, 50)), p(words(200, 50))}, []float64{0, 0, 0}},
		{"same prompt again", []Request{p("short"), p("short"), p(prefix), p(prefix)}, []float64{0, 1, 0, 1}},
		{"shared prefix", []Request{p(prefix + "a" + words(1000, 10)), p(prefix + "b" + words(2000, 10))},
			[]float64{0, float64(len(prefix)) / float64(len(prefix+"b"+words(2000, 10)))}},
		{"an earlier prompt continued", []Request{p(prefix), p(prefix + words(5000, 100))},
			[]float64{0, float64(len(prefix)) / float64(len(prefix+words(5000, 100)))}},
		{"a shorter beginning than a block is the opening", []Request{p("Write a story " + words(0, 40)), p("Write a story " + words(100, 40))}, []float64{0, 0}},
		{"another adapter begins apart", []Request{{Prompt: prefix}, {Prompt: prefix, Adapter: "a"}, {Prompt: prefix, Adapter: "a"}}, []float64{0, 0, 1}},
		{"a session's history", []Request{chat(prefix), chat(prefix, words(300, 30), words(400, 20)), chat(words(600, 200))},
			[]float64{0, -2, 0}},
		{"the longest of several", []Request{p(prefix[:300] + words(7000, 100)), p(prefix + "a" + words(8000, 5)), p(prefix + "b" + words(9000, 5))},
			[]float64{0, -1, float64(len(prefix)) / float64(len(prefix+"b"+words(9000, 5)))}},
		{"empty", []Request{p(""), p("")}, []float64{0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Repeats(c.reqs)
			for i, w := range c.want {
				switch {
				case w == -1: // a prefix of 300 bytes: 4 whole blocks, compared byte by byte after
					text := repeatKey(&c.reqs[i])
					if want := 300.0 / float64(len(text)); math.Abs(got[i]-want) > 64.0/float64(len(text)) {
						t.Errorf("request %d: %.4f, want %.4f within a block", i, got[i], want)
					}
				case w == -2: // the history: the first turn's message whole, within a block
					if lo := float64(len(repeatKey(&c.reqs[i-1]))-64) / float64(len(repeatKey(&c.reqs[i]))); got[i] < lo || got[i] >= 1 {
						t.Errorf("request %d: %.4f, want ≥ %.4f", i, got[i], lo)
					}
				case math.Abs(got[i]-w) > 1e-12:
					t.Errorf("request %d: %.4f, want %.4f", i, got[i], w)
				}
			}
		})
	}
}

// TestRepeatedShare: the share of the prefix-group file the issue measured, 4 groups of 24
// prompts that share their first part: 23 of 24 prompts of each group repeat it.
func TestRepeatedShare(t *testing.T) {
	var reqs []Request
	for g := range 4 {
		prefix := words(10000*g, 1000)
		for i := range 24 {
			reqs = append(reqs, Request{Prompt: prefix + words(10000*g+1000+100*i, 60), InputTokens: 1060})
		}
	}
	got := RepeatedShare(reqs, Repeats(reqs))
	lo, hi := 4*23*1000.0/(96*1060)*0.97, 4*23*1000.0/(96*1060)*1.03
	if got < lo || got > hi {
		t.Errorf("share %.4f, want %.4f..%.4f", got, lo, hi)
	}
	lazy := Synthetic{Count: 8, InputTokens: 64, OutputTokens: 4, Seed: 1, Recipes: true, Lazy: true}
	lr, _, err := lazy.Generate(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lr = append(lr, lr[3]) // the fourth sent again
	rs := Repeats(lr)
	if rs[8] != 1 || slicesMax(rs[:8]) > 0.5 {
		t.Errorf("lazy synthetic prompts: %v, want the last 1 and the others fresh", rs)
	}
}

func slicesMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// BenchmarkRepeats: a file of 10,000 prompts of about 4 KB in 100 groups that share 3 KB.
func BenchmarkRepeats(b *testing.B) {
	var reqs []Request
	for i := range 10000 {
		g := i % 100
		reqs = append(reqs, Request{Prompt: words(100000*g, 500) + words(1000000+200*i, 150)})
	}
	bytes := 0
	for _, r := range reqs {
		bytes += len(r.Prompt)
	}
	b.SetBytes(int64(bytes))
	for b.Loop() {
		Repeats(reqs)
	}
}

// TestCountRepeats: with a tokenizer, a shared prefix counts its tokens, not its share of the
// text (here words of two lengths, so the two differ), once per distinct prefix; chat
// requests keep their share of the text.
func TestCountRepeats(t *testing.T) {
	calls := 0
	tok := TokenizerFunc(func(_ context.Context, s string) (int, error) {
		calls++
		return len(strings.Fields(s)), nil
	})
	long := strings.Repeat("abcdefghijklmnop ", 100) // 100 long words
	var reqs []Request
	for g := range 2 {
		for i := range 3 {
			p := fmt.Sprintf("g%d %s%s", g, long, words(1000*g+100*i, 100)) // 101 words shared, 100 short ones of its own
			reqs = append(reqs, Request{Prompt: p, InputTokens: 201})
		}
	}
	reqs = append(reqs, Request{Messages: []Message{{Role: "user", Content: reqs[0].Prompt}}}, Request{Messages: []Message{{Role: "user", Content: reqs[1].Prompt}}})
	got, err := CountRepeats(t.Context(), reqs, tok)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{0, 101.0 / 201, 101.0 / 201, 0, 101.0 / 201, 101.0 / 201} {
		if math.Abs(got[i]-w) > 0.006 { // the prefix may end inside the next word: one token more
			t.Errorf("request %d: %.4f, want %.4f", i, got[i], w)
		}
	}
	if text := Repeats(reqs); math.Abs(text[7]-got[7]) > 1e-12 || got[7] < 0.75 {
		t.Errorf("chat request: %.4f, want its share of the text %.4f", got[7], text[7])
	}
	if calls != 2 {
		t.Errorf("%d counts, want one per group's prefix", calls)
	}
}

// TestRepeatsLargeIndex: a workload of more text than maxRepeatBlocks blocks of 64 bytes is
// indexed in longer blocks, and a prefix shared by whole blocks still counts.
func TestRepeatsLargeIndex(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine reads or builds hundreds of MB, many times the time under it")
	}
	big := strings.Repeat("x", 70<<20) // 70 MB: blocks of 128 bytes
	reqs := []Request{{Prompt: big[:1000]}, {Prompt: big[:1000] + "y"}, {Prompt: big}}
	if x := indexFor(reqs); x.block != 128 {
		t.Errorf("block %d bytes for 70 MB of text, want 128", x.block)
	}
	got := Repeats(reqs)
	if got[1] != 1000.0/1001 || got[2] != 1000.0/float64(len(big)) {
		t.Errorf("%v, want the first 1000 bytes repeated", got)
	}
}

// BenchmarkRepeatsLazy: a lazy synthetic workload (64 prompts of 20,000 tokens, about 7 MB),
// each prompt rebuilt from its recipe to be indexed, as a run does before its first request.
func BenchmarkRepeatsLazy(b *testing.B) {
	syn := Synthetic{Count: 64, InputTokens: 20000, OutputTokens: 2, Seed: 1, Recipes: true, Lazy: true}
	reqs, _, err := syn.Generate(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(TextBytes(len(reqs), 20000)))
	for b.Loop() {
		Repeats(reqs)
	}
}
