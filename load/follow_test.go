package load

import (
	"context"
	"sync"
	"testing"
	"time"

	"servebench/client"
	"servebench/load/pacer"
	"servebench/record"
	"servebench/workload"
)

// TestFollowSessions: a later turn of a replayed session whose previous turn is still running
// at its arrival is held until that turn's end plus the recorded gap, and scheduled then; one
// whose previous turn has ended, and a row of no session, go at their arrivals; the holds are
// counted. Only lower bounds on times (a slow machine makes the fake backend slower, never
// faster) and exact schedules are asserted.
func TestFollowSessions(t *testing.T) {
	ms := time.Millisecond
	w := []workload.Request{
		{ID: 0, Prompt: "a1", OutputTokens: 20, InputTokens: 5}, // session A, 20 × 5 ms: ends after 100 ms
		{ID: 1, Prompt: "b1", OutputTokens: 1, InputTokens: 5},  // session B
		{ID: 2, Prompt: "a2", OutputTokens: 1, InputTokens: 5},  // A's turn 2: arrives while a1 runs
		{ID: 3, Prompt: "c", OutputTokens: 1, InputTokens: 5},   // no session
		{ID: 4, Prompt: "b2", OutputTokens: 1, InputTokens: 5},  // B's turn 2: b1 long over
	}
	c := &collector{}
	var out Outcome
	r := &Runner{Backend: &fakeBackend{gap: 5 * ms}, Workload: w, Sink: c.sink, PromptSource: record.SourceTokenizer,
		Follows: []*workload.Follow{nil, nil, {Prev: 0, Gap: 30 * ms}, nil, {Prev: 1, Gap: -1}},
		OnEnd:   func(o Outcome) { out = o }}
	offsets := []time.Duration{0, 10 * ms, 20 * ms, 25 * ms, 300 * ms}
	err := r.Run(context.Background(), context.Background(), time.Now(), Config{Pacer: pacer.Trace{Offsets: offsets}, Requests: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != 5 {
		t.Fatalf("%d records, want 5", len(c.recs))
	}
	recs := map[int]*record.Record{}
	for _, rec := range c.recs {
		recs[rec.ID] = rec
	}
	for _, i := range []int{0, 1, 3, 4} {
		if got := time.Duration(recs[i].Scheduled); got != offsets[i] {
			t.Errorf("request %d scheduled at %v, want its arrival %v", i, got, offsets[i])
		}
	}
	a1, a2 := recs[0], recs[2]
	if a2.Scheduled < a1.Done+int64(30*ms) || a2.Dispatched < a2.Scheduled {
		t.Errorf("a2 scheduled %v, dispatched %v: want at least a1's end %v + 30 ms", time.Duration(a2.Scheduled),
			time.Duration(a2.Dispatched), time.Duration(a1.Done))
	}
	h := out.Held
	if h == nil || h.Turns != 2 || h.Held != 1 || h.Lost != 0 || h.Longest < 110*ms || h.Total != h.Longest {
		t.Errorf("held %+v: want 2 turns, 1 held by at least 110 ms", h)
	}
	if out.Unsent != 0 {
		t.Errorf("unsent %d", out.Unsent)
	}
}

// TestFollowStop: a turn held when sending stops is never sent, and counted lost and unsent.
func TestFollowStop(t *testing.T) {
	w := []workload.Request{{ID: 0, Prompt: "a1", OutputTokens: 1000, InputTokens: 5}, {ID: 1, Prompt: "a2", OutputTokens: 1, InputTokens: 5}}
	c := &collector{}
	var out Outcome
	r := &Runner{Backend: &fakeBackend{gap: time.Millisecond}, Workload: w, Sink: c.sink, PromptSource: record.SourceTokenizer,
		Follows: []*workload.Follow{nil, {Prev: 0, Gap: 0}}, OnEnd: func(o Outcome) { out = o }}
	soft, stop := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, stop)
	err := r.Run(soft, context.Background(), time.Now(), Config{Pacer: pacer.Trace{Offsets: []time.Duration{0, time.Millisecond}},
		Requests: 2, Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != 1 || c.recs[0].ID != 0 {
		t.Fatalf("records %d, want a1's alone", len(c.recs))
	}
	if h := out.Held; h == nil || h.Turns != 1 || h.Lost != 1 || out.Unsent != 1 {
		t.Errorf("held %+v, unsent %d: want the turn lost and unsent", h, out.Unsent)
	}
}

// keyBackend notes the session key and header each request is sent with, by prompt.
type keyBackend struct {
	fakeBackend
	mu   sync.Mutex
	keys map[string][2]string
}

func (k *keyBackend) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	k.mu.Lock()
	k.keys[req.Prompt] = [2]string{req.SessionKey, req.SessionHeader}
	k.mu.Unlock()
	return k.fakeBackend.Do(ctx, req, obs)
}

// TestReplaySendsSessionKey: a replayed trace's row is sent with the session key it was
// recorded with, in the session header too when the run names one; a row of no session
// with none.
func TestReplaySendsSessionKey(t *testing.T) {
	w := []workload.Request{
		{ID: 0, Prompt: "a1", OutputTokens: 1, InputTokens: 5, SessionKey: "s-a"},
		{ID: 1, Prompt: "c", OutputTokens: 1, InputTokens: 5},
		{ID: 2, Prompt: "a2", OutputTokens: 1, InputTokens: 5, SessionKey: "s-a"},
	}
	be := &keyBackend{keys: map[string][2]string{}}
	r := &Runner{Backend: be, Workload: w, Sink: (&collector{}).sink, PromptSource: record.SourceTokenizer,
		Follows: []*workload.Follow{nil, nil, {Prev: 0, Gap: 0}}, SessionHeader: "X-Session-Id"}
	err := r.Run(context.Background(), context.Background(), time.Now(), Config{Pacer: pacer.Trace{Offsets: []time.Duration{0, 0, 0}}, Requests: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"a1": {"s-a", "X-Session-Id"}, "c": {"", ""}, "a2": {"s-a", "X-Session-Id"}}
	for p, k := range want {
		if got := be.keys[p]; got != k {
			t.Errorf("%s sent with key and header %q, want %q", p, got, k)
		}
	}
}
