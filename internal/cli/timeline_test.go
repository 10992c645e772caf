package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"servebench/sim"
)

// TestTimelineOverHTTP runs closed loops against the simulator over loopback, one of
// requests of their own and one of 3-turn sessions, with 10% of requests failing with HTTP
// 503, and reads each records file back as OTLP/JSON and as the HTML page. The OTLP output
// must decode strictly as an ExportTraceServiceRequest with one CLIENT span per record (an
// error status on each failed one), its phases as children, and one span per session; the
// page must draw every record on the swim-lane chart, on as many lanes as users.
func TestTimelineOverHTTP(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) {
		c.Faults = sim.FaultList{{Fault: sim.Fault{Kind: sim.FaultHTTP503}, P: 0.1}}
	})
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		extra []string
	}{{"requests", []string{"--requests", "60"}}, {"sessions", []string{"--requests", "20", "--turns", "3", "--think-time", "20ms"}}} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".jsonl")
			args := append([]string{"run", "-q", "--url", url, "--concurrency", "5", "--warmup", "0",
				"--input-tokens", "32", "--output-tokens", "12", "-o", p}, c.extra...)
			if code, out, errs := runMain(t, args...); code != 0 {
				t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
			}
			h, recs := readRecords(t, p)
			failed, sessions := 0, map[int]bool{}
			for _, r := range recs {
				if !r.OK() {
					failed++
				}
				if r.Session > 0 {
					sessions[r.Session] = true
				}
			}
			if c.name == "sessions" && len(sessions) == 0 {
				t.Fatal("--turns 3 wrote no session")
			}

			otlp := p + ".otlp.json" // the extension alone chooses the format
			if code, out, errs := runMain(t, "report", p, "-o", otlp); code != 0 {
				t.Fatalf("report otlp: exit %d\n%s\n%s", code, out, errs)
			}
			b, err := os.ReadFile(otlp)
			if err != nil {
				t.Fatal(err)
			}
			var req coltrace.ExportTraceServiceRequest
			if err := (protojson.UnmarshalOptions{}).Unmarshal(b, &req); err != nil {
				t.Fatalf("not an ExportTraceServiceRequest: %v", err)
			}
			spans := req.ResourceSpans[0].ScopeSpans[0].Spans
			clients, errored, children, sessionSpans := 0, 0, 0, 0
			for _, s := range spans {
				switch {
				case s.Kind == 3: // CLIENT: a request
					clients++
					if s.Status.GetCode() == 2 {
						errored++
					}
					if got := time.Unix(0, int64(s.StartTimeUnixNano)); got.Before(h.Start) || got.After(h.Start.Add(time.Hour)) {
						t.Fatalf("a span starts at %v, the run at %v", got, h.Start)
					}
				case s.Name == "queue" || s.Name == "prefill" || s.Name == "decode":
					children++
				default:
					sessionSpans++
				}
			}
			if clients != len(recs) || errored != failed || sessionSpans != len(sessions) || children < 2*len(recs) {
				t.Errorf("%d request spans (%d errors), %d phases, %d session spans for %d records (%d failed) in %d sessions",
					clients, errored, children, sessionSpans, len(recs), failed, len(sessions))
			}
			var raw struct {
				ResourceSpans []struct {
					ScopeSpans []struct {
						Spans []struct{ TraceID, SpanID string }
					}
				}
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			for _, s := range raw.ResourceSpans[0].ScopeSpans[0].Spans {
				if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(s.TraceID) || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(s.SpanID) {
					t.Fatalf("ids %q %q are not OTLP/JSON's hex", s.TraceID, s.SpanID)
				}
			}
			again := p + ".again.otlp.json"
			runMain(t, "report", p, "--format", "otlp-json", "-o", again)
			if b2, _ := os.ReadFile(again); !bytes.Equal(b, b2) {
				t.Error("two reports of one file differ")
			}

			page := p + ".html"
			if code, out, errs := runMain(t, "report", p, "-o", page); code != 0 {
				t.Fatalf("report html: exit %d\n%s\n%s", code, out, errs)
			}
			hb, _ := os.ReadFile(page)
			m := regexp.MustCompile(`<svg class="lanes" id="sl0-all" data-n="(\d+)" data-lanes="(\d+)"`).FindSubmatch(hb)
			if m == nil {
				t.Fatal("no swim-lane chart in the page")
			}
			n, _ := strconv.Atoi(string(m[1]))
			lanes, _ := strconv.Atoi(string(m[2]))
			if n != len(recs) || lanes != 5 {
				t.Errorf("the chart draws %d requests on %d lanes, want %d on 5 (the users)", n, lanes, len(recs))
			}
			t.Logf("%d records, %d failed, %d sessions: %s", len(recs), failed, len(sessions), fmt.Sprint(lanes, " lanes"))
		})
	}
}
