package runspec

import (
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/record"
)

func TestValidateNeverMutatesAndResolveDerives(t *testing.T) {
	s := Default()
	before := s.clone()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		if s.Value(k) != before.Value(k) {
			t.Errorf("Validate changed %s", k)
		}
	}
	r := s.Resolve()
	if r.Concurrency != DefaultConcurrency || r.Requests != DefaultRequests || r.Warmup != 2*DefaultConcurrency {
		t.Errorf("resolved closed loop: %d users, %d requests, %d warmup", r.Concurrency, r.Requests, r.Warmup)
	}
	if s.Concurrency != 0 || s.Requests != 0 {
		t.Error("Resolve changed its receiver")
	}
	o := Default()
	o.Rate, o.Duration = 4, time.Second
	o.MarkSet("rate", "duration")
	ro := o.Resolve()
	if ro.Concurrency != 0 || ro.Requests != 0 || ro.Warmup != 4 {
		t.Errorf("resolved open loop: %d users, %d requests, %d warmup", ro.Concurrency, ro.Requests, ro.Warmup)
	}
	w := Default()
	w.Warmup = 0
	w.MarkSet("warmup")
	if rw := w.Resolve(); rw.Warmup != 0 {
		t.Errorf("--warmup 0 resolved to %d", rw.Warmup)
	}
}

func TestZeroMeansNothingWhenSet(t *testing.T) {
	s := Default()
	s.MarkSet("concurrency")
	if err := s.Validate(); err == nil || !IsUsage(err) || !strings.Contains(err.Error(), "--concurrency") {
		t.Errorf("--concurrency 0: %v", err)
	}
	s = Default()
	s.Requests = -1
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "--requests") {
		t.Errorf("--requests -1 (unset flag, file value): %v", err)
	}
}

func TestRedaction(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pw@host:8000/v1": "http://REDACTED@host:8000/v1",
		"http://host:8000":            "http://host:8000",
		"ht!tp://u:p@h":               "ht!tp://REDACTED@h",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	s := Default()
	s.URL, s.APIKey, s.Headers = "http://bob:hunter22@127.0.0.1:1", "sk-key", []string{"X-Api-Key=hdrsecret", "X-Trace=1"}
	msg := s.Redact("401: bad key sk-key for bob:hunter22 (hdrsecret)")
	for _, secret := range []string{"sk-key", "hunter22", "hdrsecret"} {
		if strings.Contains(msg, secret) {
			t.Errorf("%q left in %q", secret, msg)
		}
	}
	args := RedactArgs([]string{"--url", s.URL, "--api-key=sk-key", "--header", "X-Api-Key=hdrsecret", "--url=http://a:b@c"})
	if j := strings.Join(args, " "); strings.Contains(j, "hunter22") || strings.Contains(j, "sk-key") || strings.Contains(j, "hdrsecret") || strings.Contains(j, "a:b") {
		t.Errorf("RedactArgs left a secret: %s", j)
	}
	if rec := s.Record(); strings.Contains(rec["url"].(string), "hunter22") {
		t.Errorf("the recorded URL holds the password: %v", rec["url"])
	}
}

// Like keeps the baseline's settings, takes the user's over them, and drops the baseline's
// load shape when the user gives another.
func TestLikeLoadShapes(t *testing.T) {
	base := Default()
	base.Concurrency, base.InputTokens = 8, 64
	base.MarkSet("concurrency", "input-tokens")
	rb := base.Resolve()
	h := &record.Header{Config: rb.Record(), ConfigSet: rb.SetKeys()}

	user := Default()
	user.Rate, user.Duration = 5, 10*time.Second
	user.MarkSet("rate", "duration")
	s, b, err := Like(&user, h, "base.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if s.Concurrency != 0 || s.Rate != 5 || s.Requests != 0 || s.Duration != 10*time.Second || s.InputTokens != 64 || s.Warmup != 5 {
		t.Errorf("like: %d users, rate %v, %d requests, %v, %d in, %d warmup", s.Concurrency, s.Rate, s.Requests, s.Duration, s.InputTokens, s.Warmup)
	}
	var keys []string
	for _, c := range b.Changes {
		keys = append(keys, c.Key)
	}
	for _, k := range []string{"concurrency", "rate", "requests", "duration", "warmup"} {
		if !slices.Contains(keys, k) {
			t.Errorf("change %s not listed: %v", k, keys)
		}
	}
	if slices.Contains(keys, "input-tokens") || b.Rebuilt {
		t.Errorf("input-tokens listed or workload rebuilt: %v %v", keys, b.Rebuilt)
	}
	// nothing changed: nothing listed; an older file without config_set replays as well
	h.ConfigSet = nil
	plain := Default()
	same, b2, err := Like(&plain, h, "base.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(b2.Changes) != 0 || same.Concurrency != 8 {
		t.Errorf("plain replay: %v, changes %+v, %d users", err, b2.Changes, same.Concurrency)
	}
}
