package load

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"servebench/client"
	"servebench/record"
	"servebench/workload"
)

// promptLog records the prompt each request id sent.
type promptLog struct {
	fakeBackend
	mu   sync.Mutex
	sent map[string]string // request id → prompt
}

func (p *promptLog) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	p.mu.Lock()
	p.sent[req.RequestID] = req.Request.Prompt
	p.mu.Unlock()
	return p.fakeBackend.Do(ctx, req, obs)
}

// TestWarmPrompts: with Runner.Warm the warmup sends only the workload's first Warm prompts
// (cycled when it runs longer, as --warmup auto may) and measured requests only the others,
// so no measured request repeats a prompt the warmup sent.
func TestWarmPrompts(t *testing.T) {
	var w []workload.Request
	for i := range 7 {
		w = append(w, workload.Request{ID: i, Prompt: fmt.Sprint("p", i), OutputTokens: 1})
	}
	be := &promptLog{fakeBackend: fakeBackend{gap: time.Millisecond}, sent: map[string]string{}}
	c := &collector{}
	r := &Runner{Backend: be, Workload: w, Warm: 2, Sink: c.sink}
	if err := r.Run(context.Background(), context.Background(), time.Now(), Config{Concurrency: 2, Warmup: 6, Requests: 10}); err != nil {
		t.Fatal(err)
	}
	warm, measured := map[string]bool{}, map[string]int{}
	for _, rec := range c.recs {
		p := be.sent[RequestID(rec.Run, rec.ID)]
		if rec.Phase == record.PhaseWarmup {
			warm[p] = true
		} else {
			measured[p]++
		}
	}
	if len(warm) != 2 || !warm["p0"] || !warm["p1"] {
		t.Errorf("warmup sent %v, want p0 and p1 only", warm)
	}
	for p := range measured {
		if warm[p] {
			t.Errorf("measured request sent the warmup's prompt %s", p)
		}
	}
	if len(measured) != 5 {
		t.Errorf("measured prompts %v, want the 5 others", measured)
	}
}
