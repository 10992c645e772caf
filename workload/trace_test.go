package workload

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newlineTokenizer is charTokenizer that also counts every newline as a token, as BPE
// tokenizers do, so the block separators cost what they would on a server.
func newlineTokenizer() Tokenizer {
	var calls atomic.Int64
	words := charTokenizer(&calls)
	return TokenizerFunc(func(ctx context.Context, text string) (int, error) {
		n, err := words.Count(ctx, text)
		return n + strings.Count(text, "\n"), err
	})
}

const mooncakeSample = `{"timestamp": 0, "input_length": 40, "output_length": 5, "hash_ids": [0, 1, 2]}
{"timestamp": 250, "input_length": 35, "output_length": 7, "hash_ids": [0, 1, 3]}

{"timestamp": 250, "input_length": 12, "output_length": 1, "hash_ids": [0]}
{"timestamp": 1000.5, "input_length": 50, "output_length": 2, "hash_ids": [4, 5]}
{"timestamp": 2000, "input_length": 9, "output_length": 3}
`

func TestMooncake(t *testing.T) {
	for name, tok := range map[string]Tokenizer{"words": newlineTokenizer(), "none": nil} {
		t.Run(name, func(t *testing.T) {
			m := Mooncake{BlockTokens: 16, Seed: 5}
			tr, err := m.Read(context.Background(), strings.NewReader(mooncakeSample), "mc.jsonl", tok)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Exact != (tok != nil) {
				t.Errorf("Exact = %v with tokenizer %v", tr.Exact, tok != nil)
			}
			count := tok
			if count == nil {
				count = wordCount
			}
			wantAt := []time.Duration{0, 250 * time.Millisecond, 250 * time.Millisecond, 1000500 * time.Microsecond, 2 * time.Second}
			wantIn := []int{40, 35, 12, 50, 9}
			for i, r := range tr.Requests {
				n, _ := count.Count(context.Background(), r.Prompt)
				if r.ID != i || r.At != wantAt[i] || r.InputTokens != wantIn[i] || n != wantIn[i] {
					t.Fatalf("request %d: id %d at %v, %d (measured %d) tokens; want at %v, %d", i, r.ID, r.At, r.InputTokens, n, wantAt[i], wantIn[i])
				}
			}
			p := func(i int) string { return tr.Requests[i].Prompt }
			// blocks 0 and 1 are shared by requests 0 and 1; request 2's cut block 0 is a prefix of both
			b0 := p(0)[:strings.Index(p(0), "\n")+1]
			b01 := p(0)[:strings.Index(p(0)[len(b0):], "\n")+len(b0)+1]
			if n, _ := count.Count(context.Background(), b0); tok != nil && n != 16 {
				t.Errorf("block 0 has %d tokens, want 16", n)
			}
			if !strings.HasPrefix(p(1), b01) || strings.HasPrefix(p(1), p(0)[:len(b01)+5]) {
				t.Errorf("requests 0 and 1 must share exactly blocks 0 and 1:\n%q\n%q", p(0), p(1))
			}
			if !strings.HasPrefix(b0, strings.TrimSpace(p(2))[:len(p(2))-8]) {
				t.Errorf("request 2's cut block 0 is not a prefix of block 0:\n%q\n%q", p(2), b0)
			}
			if strings.Contains(p(3), b0[:20]) || strings.Contains(p(4), b0[:20]) {
				t.Error("requests without block 0 contain its text")
			}
			// reusable: request 1 reuses 32 of 35, request 2 all 12: 44 of 146
			// what the text repeats (Repeats) is what the hash ids say, to within a few tokens:
			// 44 of 146, or 32 where request 2's text is shorter than Repeats' block (an opening)
			if got := RepeatedShare(tr.Plain(), Repeats(tr.Plain())); got < 32.0/146-0.03 || got > 44.0/146+0.03 {
				t.Errorf("repeated share %v, want 32 or 44 of 146 (%.3f, %.3f)", got, 32.0/146, 44.0/146)
			}
			again, _ := m.Read(context.Background(), strings.NewReader(mooncakeSample), "mc.jsonl", tok)
			h1, _ := HashTrace(tr, m.WithDefaults())
			h2, _ := HashTrace(again, m.WithDefaults())
			again.Requests[4].At++
			h3, _ := HashTrace(again, m.WithDefaults())
			if h1 != h2 || h1 == h3 {
				t.Errorf("trace hashes: same input %v, other arrival %v", h1 == h2, h1 == h3)
			}
		})
	}
}

func TestMooncakeLimitAndOffsets(t *testing.T) {
	m := Mooncake{Limit: 2, Chat: true}
	tr, err := m.Read(context.Background(), strings.NewReader(`{"timestamp": 1000, "input_length": 600, "output_length": 5, "hash_ids": [7, 8]}
{"timestamp": 1500, "input_length": 520, "output_length": 5, "hash_ids": [7, 9]}
{"timestamp": -1}`), "mc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Requests) != 2 || tr.Requests[1].Messages[0].Content == "" || tr.Requests[1].Prompt != "" {
		t.Fatalf("requests %+v", tr.Requests)
	}
	if got := tr.Offsets(); got[0] != 0 || got[1] != 500*time.Millisecond {
		t.Errorf("offsets %v, want rebased to the first request", got)
	}
	if got, want := RepeatedShare(tr.Plain(), Repeats(tr.Plain())), 512.0/1120; math.Abs(got-want) > 0.01 {
		t.Errorf("repeated share %v, want %v (default block 512)", got, want)
	}
	if len(tr.Plain()) != 2 || tr.Plain()[1].OutputTokens != 5 {
		t.Error("Plain lost requests")
	}
}

// TestMooncakeSessions: rows of one session_id follow one another, with the gap from the
// previous turn's recorded end (−1 where none was recorded); rows of no session follow none.
// Each row keeps its session_id as the key it is sent with, through a saved workload too.
func TestMooncakeSessions(t *testing.T) {
	var m Mooncake
	tr, err := m.Read(context.Background(), strings.NewReader(`{"timestamp": 0, "input_length": 5, "output_length": 1, "session_id": "a", "end_timestamp": 40}
{"timestamp": 10, "input_length": 5, "output_length": 1}
{"timestamp": 20, "input_length": 5, "output_length": 1, "session_id": 7}
{"timestamp": 50, "input_length": 5, "output_length": 1, "session_id": "a", "end_timestamp": 60}
{"timestamp": 55, "input_length": 5, "output_length": 1, "session_id": 7}
{"timestamp": 58, "input_length": 5, "output_length": 1, "session_id": "a"}
{"timestamp": 70, "input_length": 5, "output_length": 1, "session_id": ""}`), "mc", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Follow{nil, nil, nil, {Prev: 0, Gap: 10 * time.Millisecond}, {Prev: 2, Gap: -1}, {Prev: 3, Gap: 0}, nil}
	got := tr.Follows()
	if len(got) != len(want) {
		t.Fatalf("follows %v", got)
	}
	for i := range want {
		if (got[i] == nil) != (want[i] == nil) || got[i] != nil && *got[i] != *want[i] {
			t.Errorf("row %d follows %+v, want %+v", i, got[i], want[i])
		}
	}
	keys := []string{"a", "", "7", "a", "7", "a", ""} // sent as each request's session key
	for i, r := range tr.Plain() {
		if r.SessionKey != keys[i] || r.Session != 0 {
			t.Errorf("row %d: session key %q, session %d; want key %q and no session of the runner's", i, r.SessionKey, r.Session, keys[i])
		}
	}
	var enc strings.Builder
	if err := Encode(&enc, tr.Plain()); err != nil {
		t.Fatal(err)
	}
	if back, err := Read(strings.NewReader(enc.String()), "saved", 1); err != nil || back[3].SessionKey != "a" {
		t.Errorf("saved and read back: %v, %+v", err, back)
	}
	tr, _ = m.Read(context.Background(), strings.NewReader(`{"timestamp": 0, "input_length": 5, "output_length": 1}`), "mc", nil)
	if tr.Follows() != nil {
		t.Error("a trace without sessions has follows")
	}
}

func TestMooncakeErrors(t *testing.T) {
	const ok = `{"timestamp": 0, "input_length": 10, "output_length": 5}` + "\n"
	for _, tc := range []struct{ body, want string }{
		{ok + `{"timestamp": 1, "input_length": -3, "output_length": 5}`, `mc:2: "input_length": -3 must be at least 1 token`},
		{ok + ok + `{"timestamp": 1, "input_length": 3, "output_length": -1}`, `mc:3: "output_length": -1 must be at least 1 token`},
		{`{"input_length": 3, "output_length": 1}`, `mc:1: "timestamp": missing`},
		{`{"timestamp": 0, "output_length": 1}`, `mc:1: "input_length": missing`},
		{`{"timestamp": 0, "input_length": 1}`, `mc:1: "output_length": missing`},
		{`{"timestamp": 5, "input_length": 1, "output_length": 1}` + "\n" + ok, `mc:2: "timestamp": 0 is before the previous row's 5`},
		{`{"timestamp": 0, "input_length": "x", "output_length": 1}`, `mc:1: "input_length": want a whole number, found a JSON string`},
		{`{"timestamp": 0, "input_length": 1.5, "output_length": 1}`, `mc:1: "input_length": want a whole number, found 1.5`},
		{`{"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2, 3]}`, `mc:1: "hash_ids": 3 blocks of 512 tokens need an input_length over 1024, not 1024`},
		{`{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}` + "\n{", `mc:2: invalid JSON`},
		{`{"timestamp": 0, "input_length": 99999999, "output_length": 1}`, `mc:1: "input_length": 99999999 is over the`},
		{ok + `{"timestamp": 0, "input_length": 1, "output_length": 1, "pad": "` + strings.Repeat("x", 200) + `"}`, `mc:2: record too long: longer than the 100-byte limit`},
		{"\n\n", `mc: no requests`},
	} {
		m := Mooncake{MaxRecordBytes: 100}
		_, err := m.Read(context.Background(), strings.NewReader(tc.body), "mc", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%q: err = %v, want one line containing %q", tc.body, err, tc.want)
		}
	}
}

const burstSample = `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
5,ChatGPT,472,18,490,Conversation log
45,ChatGPT,1087,0,1087,Conversation log
118,GPT-4,417,30,447,Conversation log
118.5,ChatGPT,52,"12",64,"API log, new"
`

func TestBurstGPT(t *testing.T) {
	tok := newlineTokenizer()
	b := BurstGPT{Seed: 3}
	tr, err := b.Read(context.Background(), strings.NewReader(burstSample), "b.csv", tok)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		at      time.Duration
		in, out int
	}{{0, 472, 18}, {113 * time.Second, 417, 30}, {113500 * time.Millisecond, 52, 12}}
	if len(tr.Requests) != len(want) || tr.Dropped != 1 || !tr.Exact {
		t.Fatalf("%d requests, %d dropped, exact %v", len(tr.Requests), tr.Dropped, tr.Exact)
	}
	for i, w := range want {
		r := tr.Requests[i]
		n, _ := tok.Count(context.Background(), r.Prompt)
		if r.At != w.at || r.InputTokens != w.in || n != w.in || r.OutputTokens != w.out {
			t.Errorf("request %d: at %v, %d (measured %d) → %d; want %+v", i, r.At, r.InputTokens, n, r.OutputTokens, w)
		}
	}
	// columns are found by name, in any order and case
	swapped := "response TOKENS , request tokens,timestamp\n10,20,1\n"
	tr, err = (&BurstGPT{}).Read(context.Background(), strings.NewReader(swapped), "s.csv", nil)
	if err != nil || tr.Requests[0].InputTokens != 20 || tr.Requests[0].OutputTokens != 10 {
		t.Fatalf("swapped columns: %+v, %v", tr, err)
	}
	b = BurstGPT{Model: "GPT-4"}
	tr, err = b.Read(context.Background(), strings.NewReader(burstSample), "b.csv", nil)
	if err != nil || len(tr.Requests) != 1 || tr.Requests[0].InputTokens != 417 || tr.Dropped != 3 {
		t.Fatalf("model filter: %+v, %v", tr, err)
	}
}

func TestBurstGPTErrors(t *testing.T) {
	const head = "Timestamp,Request tokens,Response tokens\n"
	for _, tc := range []struct{ body, want string }{
		{head + "1,10,5\n2,-10,5", `b.csv:3: "Request tokens": -10 must not be negative`},
		{head + "1,10,x", `b.csv:2: "Response tokens": strconv.ParseFloat: parsing "x"`},
		{head + "1,10.5,3", `b.csv:2: "Request tokens": 10.5 is not a whole number`},
		{head + "1,10", `b.csv:2: "Response tokens": missing: the line has 2 columns`},
		{head + "2,1,1\n1,1,1", `b.csv:3: "Timestamp": 1 is before the previous row's 2 `},
		{head + `1,"10,5`, `b.csv:2: unterminated quoted field`},
		{"Timestamp,Request tokens\n", `b.csv:1: header has no "Response tokens" column`},
		{"", `b.csv:1: empty file`},
		{head + "1,0,1\n", `no requests (1 rows skipped)`},
		{head + strings.Repeat("9", 200), `b.csv:2: record too long`},
	} {
		_, err := (&BurstGPT{MaxRecordBytes: 100}).Read(context.Background(), strings.NewReader(tc.body), "b.csv", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%q: err = %v, want one line containing %q", tc.body, err, tc.want)
		}
	}
	if _, err := (&BurstGPT{Model: "x"}).Read(context.Background(), strings.NewReader("Timestamp,Request tokens,Response tokens\n1,1,1"), "b.csv", nil); err == nil {
		t.Error("a Model filter without a Model column passed")
	}
}

func TestSplitCSV(t *testing.T) {
	for in, want := range map[string]string{
		`a,b,,c`:             `a|b||c`,
		`"a,b","say ""x""",`: `a,b|say "x"|`,
		``:                   ``,
	} {
		got, err := splitCSV([]byte(in))
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := splitCSV([]byte(`"a"b`)); err == nil {
		t.Error(`"a"b parsed`)
	}
}
