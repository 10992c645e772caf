package metrics

import (
	"strings"
	"testing"
	"time"

	"servebench/record"
)

// poolRec is a completed pooling request: sent at sent ms, done lat ms later, with batch
// inputs and prompt tokens counted by the server.
func poolRec(id int, sent, lat float64, batch, prompt int) *record.Record {
	ms := func(v float64) int64 { return int64((10 + v) * float64(time.Millisecond)) } // 0 is "never"
	return &record.Record{ID: id, Phase: record.PhaseMeasure, Scheduled: ms(sent) - 1, Dispatched: ms(sent) - 1, Sent: ms(sent),
		Headers: ms(sent + lat/2), Done: ms(sent + lat), Status: 200, Inputs: batch,
		InputTokens: prompt, PromptTokens: prompt, PromptTokensSource: record.SourceServer}
}

// TestPoolingSummary checks the figures of a pooling run against values computed by hand:
// latency sent → done, throughputs over the window, batch sizes; a failed request counts
// in none of them.
func TestPoolingSummary(t *testing.T) {
	var a Accumulator
	a.SetHeader(&record.Header{Target: record.Target{API: "openai-embeddings"}})
	a.Add(poolRec(0, 0, 100, 4, 40))
	a.Add(poolRec(1, 100, 200, 8, 80))
	a.Add(poolRec(2, 300, 300, 4, 40)) // the window: 0 → 650 ms
	a.Add(poolRec(3, 350, 300, 12, 120))
	failed := poolRec(4, 100, 50, 8, 0)
	failed.ErrorClass, failed.Error = record.ErrDecode, "1 embeddings for 8 inputs"
	a.Add(failed)
	s := a.Summary()
	p := s.Pooling
	if p == nil {
		t.Fatal("no pooling summary")
	}
	if p.Requests != 4 || p.Inputs != 28 || p.InputTokens != 280 {
		t.Errorf("requests %d, inputs %d, tokens %d; want 4, 28, 280", p.Requests, p.Inputs, p.InputTokens)
	}
	near := func(name string, got, want float64) {
		if d := got - want; d > 1e-6*want || d < -1e-6*want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	w := s.Window.Seconds()
	near("window", w, 0.65)
	near("request throughput", p.RequestThroughput, 4/0.65)
	near("input throughput", p.InputThroughput, 280/0.65)
	near("inputs per second", p.InputsPerSecond, 28/0.65)
	near("latency p50", p.Latency.Median, 250e6) // of 100, 200, 300, 300 ms: (200+300)/2
	near("latency max", p.Latency.Max, 300e6)
	near("latency from dispatch min", p.LatencyFromDispatch.Min, 100e6+1)
	near("batch mean", p.BatchSize.Mean, 7)
	near("batch max", p.BatchSize.Max, 12)
	if s.TTFT.Valid() || s.ITLChunk.Valid() {
		t.Error("a pooling run has TTFT or ITL values")
	}
}

// TestPoolingOnlyForPooling: a generating run has no pooling summary; a pooling API in the
// header makes one even when no request reported its batch (all failed before the answer).
func TestPoolingOnlyForPooling(t *testing.T) {
	var gen Accumulator
	gen.SetHeader(&record.Header{Target: record.Target{API: "openai-chat"}})
	r := poolRec(0, 0, 10, 0, 5)
	r.Events = []record.Event{{T: r.Done, N: 1}}
	gen.Add(r)
	if gen.Summary().Pooling != nil {
		t.Error("a chat run has a pooling summary")
	}
	var pool Accumulator
	pool.SetHeader(&record.Header{Target: record.Target{API: "rerank"}})
	bad := poolRec(0, 0, 10, 0, 0)
	bad.ErrorClass, bad.Headers, bad.Status = record.ErrConnect, 0, 0
	pool.Add(bad)
	s := pool.Summary()
	if s.Pooling == nil || s.Pooling.Latency.Valid() {
		t.Errorf("rerank run whose requests all failed: %+v", s.Pooling)
	}
}

// TestPoolingWarnings: the warnings of a run that streams nothing know it: the note about a
// server that reports no cached tokens (which asks whether TTFT measured cache hits) and the
// steady-state notes are not made, and a warning that applies to both kinds of run names the
// pooling run's latency where a streamed run's names TTFT.
func TestPoolingWarnings(t *testing.T) {
	run := func(api string) *Summary {
		var a Accumulator
		a.SetHeader(&record.Header{Target: record.Target{API: api}})
		for i := range 8 {
			r := poolRec(i, float64(10*i), 50, 4, 40)
			if !strings.Contains(api, "embeddings") {
				r.Inputs, r.Events, r.OutputTokens = 0, []record.Event{{T: r.Headers, N: 1}, {T: r.Done, N: 1}}, 2
			}
			a.Add(r)
		}
		return a.Summary()
	}
	chat, pool := run("openai-chat"), run("openai-embeddings")
	if pool.Streams() || !chat.Streams() {
		t.Fatalf("Streams: chat %v, embeddings %v", chat.Streams(), pool.Streams())
	}
	said := func(s *Summary, word string) bool {
		for _, w := range s.Warnings {
			if strings.Contains(w.Text+w.Action, word) {
				return true
			}
		}
		return false
	}
	if !said(chat, "whether TTFT measured prefix-cache hits") {
		t.Errorf("the chat run lacks the cached-tokens note: %+v", chat.Warnings)
	}
	for _, word := range []string{"TTFT", "ITL", "steady", "E2E"} {
		if said(pool, word) {
			t.Errorf("the embeddings run's warnings speak of %s: %+v", word, pool.Warnings)
		}
	}
	// a server that closed kept-alive connections: the same warning, in each run's figure
	ms := Stat{N: 8, Median: 1e6, Percentiles: []Percentile{{P: 99, V: 5e6}}}
	for _, c := range []struct {
		s    *Summary
		want string
	}{{&Summary{TTFT: ms, Connect: ms, MaxInFlight: 2, Completed: 8}, "TTFT starts after it"},
		{&Summary{Pooling: &Pooling{Latency: ms}, Connect: ms, MaxInFlight: 2, Completed: 8}, "latency starts after it"}} {
		ws := clientWarnings(c.s)
		if len(ws) != 1 || !strings.Contains(ws[0].Text, c.want) || ws[0].Level != Distorts {
			t.Errorf("want one distorting warning saying %q, got %+v", c.want, ws)
		}
	}
}
