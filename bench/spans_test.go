package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/conditions"
	"servebench/load"
	"servebench/runspec"
	"servebench/sim"
)

// TestSpansJoinSimTruth runs against a simulator that exports its llm_request spans to the
// run's receiver, and checks the join against the simulator's truth log: every measured
// request joined, its span's trace the one the simulator logged for its X-Request-Id, and
// its queue, prefill and decode equal to the truth within 1 ms at p99 — while a hostile
// exporter sends spans of other traces and garbage to the same receiver.
func TestSpansJoinSimTruth(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	truthPath := filepath.Join(t.TempDir(), "truth.jsonl")
	srv, url := simServer(t, func(c *sim.Config) {
		c.OTLPTracesEndpoint, c.TruthFile = "http://"+addr, truthPath
	})
	// a hostile exporter beside the server: spans of other traces, garbage, until the run ends
	stop, flooded := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(flooded)
		other := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"0102030405060708","name":"intruder"}]}]}]}`, 7)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, body := range []string{other, "\xff garbage"} {
				if resp, err := http.Post("http://"+addr+"/v1/traces", "application/json", strings.NewReader(body)); err == nil {
					resp.Body.Close()
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	run := runRecords(t, url, func(s *runspec.Spec) {
		s.OTLPListen, s.Requests, s.Concurrency, s.InputTokens, s.OutputTokens = addr, 48, 12, 128, 12
	})
	sum, h := run.sum, run.hdr
	close(stop)
	<-flooded
	srv.Close() // flushes the truth log
	d := sum.Decomposition
	if d == nil || d.Requests != 48 || d.Joined != 48 || d.Missing != 0 {
		t.Fatalf("decomposition %+v: want 48 of 48 joined", d)
	}
	if d.Other == 0 || d.Rejected == 0 || len(d.OtherNames) != 1 || d.OtherNames[0].Name != "intruder" {
		t.Errorf("other spans %d %v, rejected %d: want the intruder's counted and the garbage refused", d.Other, d.OtherNames, d.Rejected)
	}
	if d.Queue.N != 48 || d.Prefill.N != 48 || d.Decode.N != 48 {
		t.Errorf("queue, prefill, decode n = %d, %d, %d; want 48", d.Queue.N, d.Prefill.N, d.Decode.N)
	}
	truth := readSpanTruth(t, truthPath)
	spans := map[string]map[string]float64{}
	for _, l := range h.Spans {
		for _, s := range l.Spans {
			spans[s.Trace] = s.Attrs
		}
	}
	var errs []float64
	for _, r := range run.recs {
		if !r.Measured() || !r.OK() {
			continue
		}
		tr, ok := truth[load.RequestID(r.Run, r.ID)]
		if !ok || tr.Trace != r.TraceID {
			t.Fatalf("record %d: truth %+v, trace id %s", r.ID, tr, r.TraceID)
		}
		a := spans[r.TraceID]
		for k, want := range map[string]int64{"gen_ai.latency.time_in_queue": tr.Queue,
			"gen_ai.latency.time_in_model_prefill": tr.Prefill, "gen_ai.latency.time_in_model_decode": tr.Decode} {
			errs = append(errs, math.Abs(a[k]*1e9-float64(want)))
		}
	}
	slices.Sort(errs)
	if len(errs) != 3*48 {
		t.Fatalf("%d comparisons, want %d", len(errs), 3*48)
	}
	if p99 := errs[len(errs)*99/100]; p99 > 1e6 {
		t.Errorf("p99 error %.0f ns of queue/prefill/decode against the truth, want ≤ 1 ms", p99)
	}
}

type spanTruth struct {
	Trace                  string `json:"trace_id"`
	Queue, Prefill, Decode int64
}

func readSpanTruth(t *testing.T, path string) map[string]spanTruth {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]spanTruth{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct {
			ID      string `json:"request_id"`
			Kind    string `json:"kind"`
			Trace   string `json:"trace_id"`
			Queue   int64  `json:"queue_ns"`
			Prefill int64  `json:"prefill_ns"`
			Decode  int64  `json:"decode_ns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(fmt.Errorf("truth line %s: %w", sc.Text(), err))
		}
		if v.Kind == "span" {
			out[v.ID] = spanTruth{v.Trace, v.Queue, v.Prefill, v.Decode}
		}
	}
	return out
}

// TestSessionHeader checks that --session-header sends each session's key on every turn,
// one key per session, nothing on a request of no session, and records the condition.
func TestSessionHeader(t *testing.T) {
	c := sim.DefaultConfig()
	srv, err := sim.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	keys := map[string]int{} // key → turns seen
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			mu.Lock()
			keys[r.Header.Get("X-Session-Id")]++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	_, hdr := runTo(t, ts.URL, func(s *runspec.Spec) {
		s.SessionHeader, s.Turns, s.Requests, s.Concurrency, s.InputTokens, s.OutputTokens = "x-session-id", 3, 4, 2, 32, 4
	})
	if len(keys) != 4 || keys[""] != 0 {
		t.Fatalf("keys seen %v: want 4 sessions' keys, none empty", keys)
	}
	for k, n := range keys {
		if n != 3 {
			t.Errorf("key %q on %d requests, want 3 turns", k, n)
		}
	}
	found := false
	for _, c := range conditions.FromHeader(hdr) {
		found = found || c.Key == "workload.session_header" && c.Value == "x-session-id"
	}
	if !found {
		t.Error("no condition workload.session_header")
	}
}
