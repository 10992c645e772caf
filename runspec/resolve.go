package runspec

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"

	"servebench/client"
	"servebench/client/apis"
	"servebench/conditions"
)

// Resolve returns s with the values derived from the others filled in: the closed loop's 16
// users and the 200 measured requests when no load shape or stop rule was given, the warmup
// (one request per concurrency slot) when it was not set, and the arrival clock this platform
// can give. What the user set is kept apart (SetKeys), so that a run made like this one can
// tell a setting from a default. Resolve does not validate: call Validate first.
func (s Spec) Resolve() Spec {
	r := s.clone()
	r.resolveStages() // stages.go: the duration and users --stages decides
	r.resolveMedia()
	r.resolveTools()   // tools.go: the chat API, and an agent's steps as turns
	r.resolveAnswers() // answers.go
	r.resolveStartAt()
	if name, err := apis.Canonical(r.API); err == nil {
		r.API = name // an alias (vllm, llama.cpp) is recorded by the name it stands for
	}
	r.resolveEndpoints()
	if !r.OpenLoop() && r.Concurrency == 0 {
		r.Concurrency = DefaultConcurrency
	}
	if r.Requests == 0 && r.Duration == 0 && r.Trace == "" && !r.TraceDataset() {
		r.Requests = DefaultRequests // a trace without --requests replays every arrival
	}
	r.resolveReuse() // reuse.go: the prefix groups and tokens that give the share
	if !r.IsSet("warmup") {
		r.Warmup = r.DefaultWarmup()
	}
	if r.CacheSalt == "" {
		r.CacheSalt = "none"
	}
	if r.ContinuousUsage == "" {
		r.ContinuousUsage = "auto"
	}
	if r.ArrivalClock == "kernel" && !client.KernelArrivalsSupported {
		r.ArrivalClock = "read" // recorded as what was done
	}
	if r.SendClock == "kernel" && !client.KernelArrivalsSupported {
		r.SendClock = "write"
	}
	return r
}

// DefaultWarmup is two requests per closed-loop user (two waves: all users at once, as the
// measured phase starts, then one by one with the measured lengths' extremes, so that a server
// compiling kernels per shape on first use meets the shapes the measurement will; see
// bench/twins.go), one request per slot of the open-loop cap, or one second of arrivals (none
// for a trace, which replays exactly what was recorded).
func (s *Spec) DefaultWarmup() int {
	switch {
	case s.Stages != "":
		return s.stageWarmup() // the first stage's load
	case s.Concurrency > 0:
		return 2 * s.Concurrency
	case s.Trace != "" || s.TraceDataset():
		return 0
	case s.MaxConcurrency > 0:
		return s.MaxConcurrency
	case s.Ramp != "":
		return 1
	default:
		return max(1, int(s.Rate))
	}
}

// SessionCount is how many distinct sessions to build: the workload size in turns, divided
// among sessions of Turns turns.
func (s *Spec) SessionCount() int { return max(1, (s.WorkloadSize()+s.Turns-1)/s.Turns) }

// WorkloadSize is how many distinct prompts to build (resolved spec).
func (s *Spec) WorkloadSize() int {
	switch {
	case s.NumPrompts > 0:
		return s.NumPrompts
	case s.Requests > 0:
		return s.Warmup + s.Requests
	default:
		return 1000
	}
}

// Sampling parses the sampling settings.
func (s *Spec) Sampling() (client.Sampling, error) {
	var out client.Sampling
	for _, f := range []struct {
		name string
		val  string
		dst  **float64
	}{{"--temperature", s.Temperature, &out.Temperature}, {"--top-p", s.TopP, &out.TopP}} {
		if f.val == "" {
			continue
		}
		v, err := strconv.ParseFloat(f.val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return out, Usagef("%s %q: want a finite number", f.name, f.val)
		}
		*f.dst = &v
	}
	if s.ExtraBody != "" {
		if err := json.Unmarshal([]byte(s.ExtraBody), &out.ExtraBody); err != nil || out.ExtraBody == nil {
			msg := "null"
			if err != nil {
				msg = err.Error()
			}
			return out, Usagef("--extra-body: want a JSON object: %s", msg)
		}
	}
	if err := s.putResponseFormat(&out); err != nil { // answers.go
		return out, err
	}
	if s.CacheSalt == "per-run" {
		if _, ok := out.ExtraBody["cache_salt"]; ok {
			return out, Usagef("--cache-salt per-run and a cache_salt in --extra-body: choose one")
		}
	}
	return out, nil
}

// RunSampling is the sampling of one run: the configured settings, plus with --cache-salt
// per-run a cache_salt of its own (random: a later invocation must not reuse it either).
func (s *Spec) RunSampling() (client.Sampling, error) {
	out, err := s.Sampling()
	if err != nil || s.CacheSalt != "per-run" {
		return out, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	out.ExtraBody = maps.Clone(out.ExtraBody)
	if out.ExtraBody == nil {
		out.ExtraBody = map[string]any{}
	}
	out.ExtraBody["cache_salt"] = "servebench-" + hex.EncodeToString(b[:])
	return out, nil
}

// Declared reads --conditions FILE then --condition key=value (which wins).
func (s *Spec) Declared() (conditions.Set, error) {
	var file conditions.Set
	if s.ConditionsFile != "" {
		var err error
		if file, err = conditions.LoadFile(s.ConditionsFile); err != nil {
			return nil, Usagef("--conditions: %v", err)
		}
	}
	flags, err := conditions.ParseDeclared(s.Conditions)
	if err != nil {
		return nil, Usage(err)
	}
	return conditions.Merge(file, flags), nil
}

// Record is the configuration as a records header holds it: every setting by its JSON key,
// with the API key left out and credentials in headers and the URL redacted.
func (s *Spec) Record() map[string]any {
	c := s.clone()
	c.Headers = RedactHeaders(s.Headers)
	c.URL = RedactURL(s.URL)
	c.ServerEnv = RedactEnv(s.ServerEnv)
	b, _ := json.Marshal(c)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// ParseHeaders turns --header K=V arguments into request headers; a malformed one is a usage
// error that shows it with any credential redacted.
func ParseHeaders(hs []string) (http.Header, error) {
	hdr := make(http.Header)
	for _, h := range hs {
		k, v, ok := strings.Cut(h, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, Usagef("--header %q: want K=V", RedactHeaderArg(h))
		}
		hdr.Add(strings.TrimSpace(k), v)
	}
	return hdr, nil
}
