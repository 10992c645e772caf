package report

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"servebench/record"
)

// otlpSpans checks b as OTLP/JSON and returns its spans: it must unmarshal strictly (no
// unknown field, every value of the right type) into the collector's
// ExportTraceServiceRequest, as an OTLP/HTTP receiver decodes it, and its ids must be hex of
// the right lengths — the one place where OTLP/JSON departs from protojson, which would read
// them as base64, so they are checked on the raw JSON.
func otlpSpans(t *testing.T, b []byte) []otlpSpan {
	t.Helper()
	var req coltrace.ExportTraceServiceRequest
	if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(b, &req); err != nil {
		t.Fatalf("not an ExportTraceServiceRequest: %v", err)
	}
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("want one resource and one scope, got %d resources", len(req.ResourceSpans))
	}
	var doc otlpExport
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	spans := doc.ResourceSpans[0].ScopeSpans[0].Spans
	if n := len(req.ResourceSpans[0].ScopeSpans[0].Spans); n != len(spans) {
		t.Fatalf("protojson read %d spans, the JSON holds %d", n, len(spans))
	}
	byID := map[string]otlpSpan{}
	for _, s := range spans {
		if !isHex(s.TraceID, 16) || !isHex(s.SpanID, 8) || s.ParentSpanID != "" && !isHex(s.ParentSpanID, 8) {
			t.Fatalf("span %q: ids %q %q %q are not 16- and 8-byte hex", s.Name, s.TraceID, s.SpanID, s.ParentSpanID)
		}
		if _, dup := byID[s.SpanID]; dup {
			t.Fatalf("span id %s twice", s.SpanID)
		}
		byID[s.SpanID] = s
	}
	for _, s := range spans {
		if s.ParentSpanID == "" {
			continue
		}
		p, ok := byID[s.ParentSpanID]
		switch {
		case !ok:
			t.Fatalf("span %q: parent %s is not in the file", s.Name, s.ParentSpanID)
		case p.TraceID != s.TraceID:
			t.Fatalf("span %q is in trace %s, its parent in %s", s.Name, s.TraceID, p.TraceID)
		case nanos(t, s.Start) < nanos(t, p.Start) || nanos(t, s.End) > nanos(t, p.End) || nanos(t, s.End) < nanos(t, s.Start):
			t.Fatalf("span %q [%s, %s] is not inside its parent %q [%s, %s]", s.Name, s.Start, s.End, p.Name, p.Start, p.End)
		}
	}
	return spans
}

func isHex(s string, n int) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == n && strings.Trim(s, "0") != ""
}

func nanos(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}

func attr(s otlpSpan, key string) (string, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			switch {
			case a.Value.String != nil:
				return *a.Value.String, true
			case a.Value.Int != nil:
				return *a.Value.Int, true
			}
		}
	}
	return "", false
}

// TestOTLPOfEveryFixture: each fixture file gives one CLIENT span per record, in a trace of
// its own, starting at the header's wall clock plus the record's due time, with the GenAI
// attributes; its phases are child spans; failed requests carry error.type and an error
// status; and the same file writes the same bytes twice.
func TestOTLPOfEveryFixture(t *testing.T) {
	for _, sp := range fixtureSpecs {
		t.Run(sp.file, func(t *testing.T) {
			var recs []record.Record
			in := fileInput(t, sp.file)
			next := in.Records
			in.Records = func(yield func(*record.Record, error) bool) {
				for r, err := range next {
					if err == nil {
						recs = append(recs, *r)
					}
					if !yield(r, err) {
						return
					}
				}
			}
			var b, again bytes.Buffer
			if err := Render(&b, "otlp-json", in); err != nil {
				t.Fatal(err)
			}
			if err := Render(&again, "otlp-json", fileInput(t, sp.file)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), again.Bytes()) {
				t.Error("two renderings of one file differ")
			}
			spans := otlpSpans(t, b.Bytes())
			var clients []otlpSpan
			children := map[string][]string{}
			traces := map[string]bool{}
			for _, s := range spans {
				if s.Kind == otlpKindClient {
					clients = append(clients, s)
					traces[s.TraceID] = true
				} else {
					children[s.ParentSpanID] = append(children[s.ParentSpanID], s.Name)
				}
			}
			if len(clients) != len(recs) || len(traces) != len(recs) {
				t.Fatalf("%d request spans in %d traces for %d records", len(clients), len(traces), len(recs))
			}
			wall := fixtureHeader(sp).Start.UnixNano()
			for i, s := range clients {
				r := recs[i]
				if got := nanos(t, s.Start); got != wall+r.Scheduled {
					t.Errorf("request %d starts at %d, want header start + scheduled = %d", r.ID, got, wall+r.Scheduled)
				}
				for key, want := range map[string]string{"gen_ai.system": "openai", "gen_ai.request.model": "llama-3.1-8b-instruct",
					"gen_ai.usage.input_tokens": strconv.Itoa(r.PromptTokens), "gen_ai.request.max_tokens": strconv.Itoa(r.MaxTokens),
					"server.address": "127.0.0.1", "server.port": "8000", "servebench.phase": r.Phase} {
					if got, _ := attr(s, key); got != want {
						t.Errorf("request %d: %s = %q, want %q", r.ID, key, got, want)
					}
				}
				et, hasET := attr(s, "error.type")
				phases := strings.Join(children[s.SpanID], " ")
				switch {
				case r.OK():
					if hasET || s.Status != nil || phases != "queue prefill decode" {
						t.Errorf("request %d (ok): error.type %q, status %v, phases %q", r.ID, et, s.Status, phases)
					}
					if got, _ := attr(s, "gen_ai.usage.output_tokens"); got != strconv.Itoa(r.OutputTokens) {
						t.Errorf("request %d: output tokens %q, want %d", r.ID, got, r.OutputTokens)
					}
				default:
					want := "queue prefill"
					if len(r.Events) > 0 {
						want += " decode" // a stream cut after its first token
					}
					if et != r.ErrorClass || s.Status == nil || s.Status.Code != otlpStatusError || phases != want {
						t.Errorf("request %d (%s): error.type %q, status %v, phases %q", r.ID, r.ErrorClass, et, s.Status, phases)
					}
				}
			}
		})
	}
}

// TestOTLPSessions: the turns of a session share its trace, under one span for the session
// that covers them all; two files that differ only in their start share no trace id.
func TestOTLPSessions(t *testing.T) {
	h := &record.Header{Schema: record.SchemaVersion, Version: "test", Start: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Target:   record.Target{URL: "https://gpu.example:8443/v1", API: "openai-chat", Model: "m"},
		Workload: record.Workload{Hash: "sha256:ab", Seed: 1}}
	var recs []record.Record
	for s := 1; s <= 3; s++ {
		at := int64(s) * 1e6
		for turn := 1; turn <= 4; turn++ {
			r := record.Record{ID: len(recs), Phase: record.PhaseMeasure, Session: s, Turn: turn, Scheduled: at, Dispatched: at + 1e4,
				Sent: at + 2e4, Headers: at + 5e6, Events: []record.Event{{T: at + 6e6, N: 1}, {T: at + 9e6, N: 1}}, Done: at + 9e6,
				Status: 200, PromptTokens: 10, OutputTokens: 2}
			if s == 2 && turn == 3 {
				r.Events, r.Status, r.ErrorClass, r.Error = nil, 0, record.ErrTimeout, "no answer in 5ms"
			}
			recs = append(recs, r)
			at = r.Done + 30e6 // think or tool time
		}
	}
	render := func(h *record.Header) []otlpSpan {
		var b bytes.Buffer
		if err := Render(&b, "otlp-json", Input{Header: h, Records: seqOf(recs)}); err != nil {
			t.Fatal(err)
		}
		return otlpSpans(t, b.Bytes())
	}
	spans := render(h)
	sessions, requests := map[string]otlpSpan{}, map[string]int{}
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "session "):
			sessions[s.SpanID] = s
		case s.Kind == otlpKindClient:
			if s.Name != "chat m" {
				t.Errorf("span name %q, want chat m", s.Name)
			}
			if got, _ := attr(s, "server.port"); got != "8443" {
				t.Errorf("server.port %q, want 8443", got)
			}
			requests[s.ParentSpanID]++
		}
	}
	if len(sessions) != 3 {
		t.Fatalf("%d session spans, want 3", len(sessions))
	}
	for id, s := range sessions {
		if requests[id] != 4 || s.ParentSpanID != "" {
			t.Errorf("session %s holds %d requests (want 4), parent %q", s.Name, requests[id], s.ParentSpanID)
		}
	}
	h2 := *h
	h2.Start = h.Start.Add(time.Second)
	seen := map[string]bool{}
	for _, s := range spans {
		seen[s.TraceID] = true
	}
	for _, s := range render(&h2) {
		if seen[s.TraceID] {
			t.Fatalf("a run started a second later reuses trace id %s", s.TraceID)
		}
	}
}

// TestOTLPNeedsTheWallClock: a header without its start cannot place a span in time.
func TestOTLPNeedsTheWallClock(t *testing.T) {
	err := Render(&bytes.Buffer{}, "otlp-json", Input{Label: "old", Header: &record.Header{}, Records: seqOf(nil)})
	if err == nil || !strings.Contains(err.Error(), "wall-clock start") {
		t.Fatalf("got %v, want an error naming the wall-clock start", err)
	}
}

func seqOf(recs []record.Record) func(func(*record.Record, error) bool) {
	return func(yield func(*record.Record, error) bool) {
		for i := range recs {
			if !yield(&recs[i], nil) {
				return
			}
		}
	}
}
