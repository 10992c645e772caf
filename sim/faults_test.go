package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// faultStream streams 10 tokens with the given X-Sim-Fault header.
func faultStream(t *testing.T, base, path, fault string, body map[string]any) (resp *http.Response, evs []sseEvent, hdr time.Duration, err error) {
	t.Helper()
	if body == nil {
		body = completion("tell me", 10)
	}
	start := time.Now()
	resp = post(t, base+path, body, "X-Sim-Fault", fault)
	hdr = time.Since(start)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return resp, nil, hdr, nil
	}
	evs, err = readSSE(resp.Body)
	return resp, evs, hdr, err
}

func TestFaultHTTPStatus(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	for kind, want := range map[string]int{FaultHTTP429: 429, FaultHTTP500: 500, FaultHTTP503: 503} {
		resp := post(t, base+"/v1/completions", completion("x", 5), "X-Sim-Fault", kind)
		var body struct {
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		err := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want || err != nil || body.Error.Code != want || body.Error.Message == "" {
			t.Errorf("%s: status %d, body %+v (err %v), want %d with a JSON error", kind, resp.StatusCode, body, err, want)
		}
	}
}

func TestFaultsMidStream(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	check := func(name string, ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf(name+": "+format, args...)
		}
	}
	_, evs, _, err := faultStream(t, base, "/v1/completions", "error_event", nil)
	d := decode(t, evs)
	hasErr := false
	for _, c := range d.chunks {
		hasErr = hasErr || (c.Error != nil && c.Error.Message != "")
	}
	check("error_event", err == nil && hasErr && len(d.content) == 5, "err=%v errorEvent=%v content=%d", err, hasErr, len(d.content))

	_, evs, _, err = faultStream(t, base, "/v1/completions", "disconnect", nil)
	d = decode(t, evs)
	check("disconnect", err != nil && len(d.content) == 3 && !d.done, "err=%v content=%d done=%v (want a cut stream after 3 tokens)", err, len(d.content), d.done)

	_, evs, _, err = faultStream(t, base, "/v1/completions", "disconnect=20", nil)
	d = decode(t, evs)
	check("disconnect past the end", err != nil && len(d.content) == 10 && !d.done, "err=%v content=%d done=%v", err, len(d.content), d.done)

	_, evs, _, _ = faultStream(t, base, "/v1/completions", "stall=150ms", nil)
	d = decode(t, evs)
	maxGap := time.Duration(0)
	for i := 1; i < len(d.content); i++ {
		maxGap = max(maxGap, d.content[i].at.Sub(d.content[i-1].at))
	}
	check("stall", maxGap >= 140*time.Millisecond && d.done && len(d.content) == 10, "max gap %v, done=%v", maxGap, d.done)

	_, _, hdr, _ := faultStream(t, base, "/v1/completions", "slow_headers=150ms", nil)
	check("slow_headers", hdr >= 150*time.Millisecond, "headers after %v", hdr)

	_, evs, _, _ = faultStream(t, base, "/v1/completions", "malformed_json", nil)
	d = decode(t, evs)
	check("malformed_json", d.badJSON == 1 && d.done && len(d.content) == 10, "bad=%d done=%v content=%d", d.badJSON, d.done, len(d.content))

	_, evs, _, err = faultStream(t, base, "/v1/completions", "no_done", nil)
	d = decode(t, evs)
	check("no_done", err == nil && !d.done && len(d.content) == 10, "err=%v done=%v content=%d", err, d.done, len(d.content))

	_, evs, _, _ = faultStream(t, base, "/v1/completions", "keepalive", nil)
	d = decode(t, evs)
	check("keepalive", d.comments >= 9 && d.done && len(d.content) == 10, "comments=%d", d.comments)
}

func TestFaultMultiTokenUsage(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	body := completion("x", 10)
	body["stream_options"] = map[string]any{"include_usage": true, "continuous_usage_stats": true}
	_, evs, _, _ := faultStream(t, base, "/v1/completions", "multi_token=3", body)
	d := decode(t, evs)
	var got []int
	for _, c := range d.chunks {
		if c.Usage != nil {
			got = append(got, c.Usage.Completion)
		}
	}
	if len(d.content) != 4 || fmtInts(got) != "3 6 9 10 10" {
		t.Errorf("multi_token=3 over 10 tokens: %d events, usage.completion_tokens %v; want 4 events, 3,6,9,10 then 10", len(d.content), got)
	}
	if n := countTokens(d.text); n != 10 {
		t.Errorf("text has %d tokens, want 10", n)
	}
}

func TestFaultChatChunks(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	chat := func() map[string]any {
		return map[string]any{"messages": []map[string]any{{"role": "user", "content": "hello there"}},
			"max_completion_tokens": 4, "ignore_eos": true, "stream": true}
	}
	firstHasRole := func(fault string) bool {
		_, evs, _, _ := faultStream(t, base, "/v1/chat/completions", fault, chat())
		d := decode(t, evs)
		return len(d.chunks) > 0 && d.chunks[0].Choices[0].Delta.Role != nil
	}
	if firstHasRole("") {
		t.Error("default chat stream starts with a role-only chunk, want none")
	}
	if !firstHasRole("role_chunk") {
		t.Error("role_chunk: first chunk has no role")
	}
	_, evs, _, _ := faultStream(t, base, "/v1/chat/completions", "zero_usage", chat())
	d := decode(t, evs)
	last := d.chunks[len(d.chunks)-1]
	for _, c := range d.chunks[:len(d.chunks)-1] {
		if c.Usage == nil || c.Usage.Total != 0 {
			t.Fatalf("zero_usage: content chunk usage %+v, want zeros", c.Usage)
		}
	}
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.Completion != 4 || last.Usage.Prompt != 2 {
		t.Errorf("zero_usage: final chunk %+v, want choices [] with real usage 2+4", last)
	}
}

func TestFaultHeaderRejected(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	resp := post(t, base+"/v1/completions", completion("x", 2), "X-Sim-Fault", "meteor")
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("unknown fault: status %d, want 400", resp.StatusCode)
	}
}

func TestFaultDrawReproducible(t *testing.T) {
	var l FaultList
	for _, s := range []string{"http_429=0.1", "stall:300ms=0.05"} {
		if err := l.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.String(); got != "http_429=0.1,stall:300ms=0.05" {
		t.Errorf("String() = %q", got)
	}
	draws := func() (out []string) {
		d := &faultDrawer{seed: 7, rate: 0.2, list: l}
		for range 2000 {
			f, _ := d.draw()
			out = append(out, f.String())
		}
		return out
	}
	a, b := draws(), draws()
	counts := map[string]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs between runs with the same seed: %s vs %s", i, a[i], b[i])
		}
		counts[strings.SplitN(a[i], "=", 2)[0]]++
	}
	// 10% http_429 from --fault plus its share of the 20% of the remaining 85%.
	if n := counts["http_429"]; n < 180 || n > 320 {
		t.Errorf("http_429 drawn %d times of 2000, want ~230", n)
	}
	if n := counts[""]; n < 1250 || n > 1470 {
		t.Errorf("no fault %d times of 2000, want ~1360", n)
	}
	for _, bad := range []string{"x=0.1", "stall=2", "http_429=abc", "stall:zz=0.1"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, " ")
}
