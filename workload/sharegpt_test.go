package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// genShareGPT writes n conversations in ShareGPT's shape: mostly human/gpt alternations of
// 0 to 7 turns with texts of 1 to maxWords words, and a few odd ones (starting with gpt, a
// system turn) of the kinds the real file holds.
func genShareGPT(w io.Writer, n, maxWords int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	type turn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	type item struct {
		ID            string `json:"id"`
		Conversations []turn `json:"conversations"`
	}
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	for i := range n {
		it := item{ID: fmt.Sprintf("c%d", i), Conversations: []turn{}}
		first := 0
		switch rng.IntN(20) {
		case 0:
			first = 1 // starts with gpt
		case 1:
			it.Conversations = append(it.Conversations, turn{"system", "be brief"})
		}
		for k := range rng.IntN(8) {
			from := [2]string{"human", "gpt"}[(k+first)%2]
			words := drawWords(rng, 1+rng.IntN(maxWords))
			it.Conversations = append(it.Conversations, turn{from, strings.Join(words, " ")})
		}
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		if i > 0 {
			b = append([]byte(",\n"), b...)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n]\n")
	return err
}

func shareGPTBytes(t testing.TB, n, maxWords int) []byte {
	var buf bytes.Buffer
	if err := genShareGPT(&buf, n, maxWords, 7); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestShareGPTSample checks the sample against the rule it implements, computed the slow
// way: every conversation's pair measured, the valid ones in key order, the first Count.
func TestShareGPTSample(t *testing.T) {
	data := shareGPTBytes(t, 400, 120)
	var calls atomic.Int64
	tok := charTokenizer(&calls)
	for _, tc := range []struct {
		name string
		s    ShareGPT
	}{
		{"defaults", ShareGPT{Count: 50, Seed: 1}},
		{"other seed", ShareGPT{Count: 50, Seed: 2}},
		{"tight bounds", ShareGPT{Count: 20, Seed: 1, MinPromptTokens: 30, MinOutputTokens: 20, MaxPromptTokens: 100, MaxTotalTokens: 150}},
		{"chat", ShareGPT{Count: 10, Seed: 3, Chat: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			got, exact, err := tc.s.Read(context.Background(), bytes.NewReader(data), "sg.json", tok)
			if err != nil || !exact {
				t.Fatalf("Read: exact=%v, %v", exact, err)
			}
			if calls.Load() >= 2*250 {
				t.Errorf("%d tokenizer calls: conversations that cannot be sampled were measured", calls.Load())
			}
			want := slowSample(t, data, tc.s, tok)
			if len(got) != len(want) {
				t.Fatalf("%d requests, want %d", len(got), len(want))
			}
			for i := range got {
				text := got[i].Prompt
				if tc.s.Chat {
					text = got[i].Messages[0].Content
				}
				if got[i].ID != i || text != want[i].Prompt || got[i].OutputTokens != want[i].OutputTokens || got[i].InputTokens != want[i].InputTokens {
					t.Fatalf("request %d = %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// slowSample is the reference: decode everything, measure every pair, sort by key.
func slowSample(t *testing.T, data []byte, s ShareGPT, tok Tokenizer) []Request {
	var items []sgItem
	if err := json.Unmarshal(data, &items); err != nil {
		t.Fatal(err)
	}
	d := s.WithDefaults()
	type kr struct {
		key uint64
		r   Request
	}
	var valid []kr
	for i := range items {
		p := firstPair(&items[i], 0)
		if len(p) < 2 {
			continue
		}
		in, _ := tok.Count(context.Background(), p[0].text)
		out, _ := tok.Count(context.Background(), p[1].text)
		if in < d.MinPromptTokens || out < d.MinOutputTokens || in > d.MaxPromptTokens || in+out > d.MaxTotalTokens {
			continue
		}
		valid = append(valid, kr{sampleKey(s.Seed, i), Request{Prompt: p[0].text, InputTokens: in, OutputTokens: out}})
	}
	sort.Slice(valid, func(i, j int) bool { return valid[i].key < valid[j].key })
	out := make([]Request, 0, s.Count)
	for _, v := range valid[:min(s.Count, len(valid))] {
		out = append(out, v.r)
	}
	return out
}

func TestShareGPTFilters(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }
	conv := func(turns ...string) map[string]any {
		var cs []map[string]string
		for i, v := range turns {
			cs = append(cs, map[string]string{"from": [2]string{"human", "gpt"}[i%2], "value": v})
		}
		return map[string]any{"conversations": cs}
	}
	items := []map[string]any{
		conv(words(10)),                // one turn
		conv(words(3), words(10)),      // prompt < 4
		conv(words(10), words(3)),      // output < 4
		conv(words(1025), words(10)),   // prompt > 1024
		conv(words(1000), words(1049)), // total > 2048
		conv(words(4), words(4)),       // kept: the lower bounds are inclusive
		conv(words(1024), words(1024)), // kept: so are the upper ones
		{"conversations": []map[string]string{ // gpt first: the first human turn has no reply
			{"from": "gpt", "value": words(9)}, {"from": "human", "value": words(9)}}},
	}
	data, _ := json.Marshal(items)
	s := ShareGPT{Count: 2, Seed: 1}
	reqs, _, err := s.Read(context.Background(), bytes.NewReader(data), "f.json", wordCount)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, r := range reqs {
		got[r.InputTokens] = true
	}
	if !got[4] || !got[1024] {
		t.Fatalf("kept %+v, want the 4/4 and 1024/1024 pairs", got)
	}
	s.Count = 3
	_, _, err = s.Read(context.Background(), bytes.NewReader(data), "f.json", wordCount)
	if err == nil || !strings.Contains(err.Error(), "only 2 of its 8 conversations pass") {
		t.Fatalf("Count past the valid ones: %v", err)
	}
}

func TestShareGPTDeterministic(t *testing.T) {
	data := shareGPTBytes(t, 300, 60)
	p := filepath.Join(t.TempDir(), "sg.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := ShareGPT{Count: 40, Seed: 9}
	var hashes []string
	for range 2 {
		reqs, _, err := s.ReadFile(context.Background(), p, wordCount)
		if err != nil {
			t.Fatal(err)
		}
		id, err := IdentifyFile("sharegpt", p)
		if err != nil {
			t.Fatal(err)
		}
		var enc bytes.Buffer
		if err := Encode(&enc, reqs); err != nil {
			t.Fatal(err)
		}
		h, _ := Hash(reqs, struct {
			Dataset DatasetID
			Options ShareGPT
		}{id, s.WithDefaults()})
		hashes = append(hashes, h+" "+fmt.Sprint(sha(enc.Bytes())))
	}
	if hashes[0] != hashes[1] {
		t.Fatalf("two reads differ: %v", hashes)
	}
}

func TestShareGPTSessions(t *testing.T) {
	data := shareGPTBytes(t, 200, 30)
	s := ShareGPT{Count: 30, Seed: 4, MaxTurns: 2}
	ss, exact, err := s.ReadSessions(context.Background(), bytes.NewReader(data), "sg.json", nil)
	if err != nil || exact {
		t.Fatalf("ReadSessions: exact=%v %v (want approximate without a tokenizer)", exact, err)
	}
	pairs, _, err := (&ShareGPT{Count: 30, Seed: 4, MinPromptTokens: 1, MinOutputTokens: 1, MaxPromptTokens: 1 << 20, MaxTotalTokens: 1 << 20}).
		Read(context.Background(), bytes.NewReader(data), "sg.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	multi := 0
	for i, sess := range ss {
		if sess.ID != i || len(sess.Turns) < 1 || len(sess.Turns) > 2 {
			t.Fatalf("session %d: id %d, %d turns", i, sess.ID, len(sess.Turns))
		}
		// with no filters the first turn of each session is the pair Read chooses
		if sess.Turns[0].User != pairs[i].Prompt || sess.Turns[0].OutputTokens != pairs[i].OutputTokens {
			t.Fatalf("session %d's first turn is not the sampled pair", i)
		}
		for _, tr := range sess.Turns {
			if tr.OutputTokens != len(strings.Fields(tr.Assistant)) || tr.UserTokens != len(strings.Fields(tr.User)) {
				t.Fatalf("session %d: turn lengths %d/%d do not match", i, tr.UserTokens, tr.OutputTokens)
			}
		}
		multi += len(sess.Turns) - 1
	}
	if multi == 0 {
		t.Error("no session has a second turn")
	}
	// sessions are hashed as the requests they are laid out as
	hash := func() string {
		reqs, err := SessionRequests(context.Background(), ss, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := Hash(reqs, s)
		return h
	}
	h1 := hash()
	ss[0].Turns[0].OutputTokens++
	if h2 := hash(); h1 == h2 {
		t.Error("a changed session hashes the same")
	}
}

func TestShareGPTErrors(t *testing.T) {
	good := `{"id":"a","conversations":[{"from":"human","value":"a b c d e"},{"from":"gpt","value":"a b c d e"}]}`
	for _, tc := range []struct {
		name, body, want string
		max              int
	}{
		{"truncated in an item", "[" + good + "," + good[:40], "f.json: item 1 (byte 101): unexpected end of file inside the item", 0},
		{"truncated after an item", "[" + good + ",\n" + good, "f.json: item 2 (byte 203): unexpected end of the array", 0},
		{"missing conversations", "[" + good + `,{"id":"b"}]`, `f.json: item 1 (byte 101): "conversations": missing`, 0},
		{"missing value", `[{"conversations":[{"from":"human"}]}]`, `item 0 (byte 1): "conversations"[0]."value": missing`, 0},
		{"wrong type", `[{"conversations":[{"from":"human","value":3}]}]`, `item 0 (byte 43): conversations.value: want a string, found a JSON number`, 0},
		{"syntax", `[{"conversations":[}]`, `item 0 (byte 19): invalid character '}'`, 0},
		{"not an array", `{"conversations":[]}`, `f.json: item 0 (byte 0): not a JSON array`, 0},
		{"empty", ``, `not a JSON array`, 0},
		{"data after", "[" + good + "] []", `item 1 (byte 104): data after the array`, 0},
		{"item too large", "[" + good + "," + strings.Replace(good, "a b", strings.Repeat("a ", 50), 1) + "]", `item 1 (byte 101): record too long: longer than the 150-byte limit`, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ShareGPT{Count: 1, MaxRecordBytes: tc.max}
			_, _, err := s.Read(context.Background(), strings.NewReader(tc.body), "f.json", wordCount)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
	if err := (&ShareGPT{Count: 0}).Validate(); err == nil {
		t.Error("Count 0 validated")
	}
	if err := (&ShareGPT{Count: 1, MaxPromptTokens: 2}).Validate(); err == nil {
		t.Error("a maximum below the minimum validated")
	}
}
