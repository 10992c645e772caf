package report

import (
	"encoding/json"
	"path/filepath"
	"strconv"

	"servebench/metrics"
	"servebench/record"
)

// runLoad is the load one run was sent at. A sweep point's users or rate are in its run-end
// line; everything else, and a plain run's whole load, is the header's configuration (a sweep
// writes no single concurrency or rate there, since each point has its own).
type runLoad struct {
	users      int     // closed-loop users; 0 in open loop
	rate       float64 // open-loop target req/s; 0 in closed loop
	arrival    string  // open loop: poisson, gamma or constant
	burstiness float64 // the gamma shape (1 for poisson)
	maxConc    int     // open loop: the --max-concurrency cap; 0 when none
	ramp       string  // a --ramp spec, when the rate ramped
	trace      string  // the --trace file's name (or trace dataset's), when arrivals came from one
	requests   int     // requests asked for per run; 0 when the run was timed
	open       bool    // the header says the run was an open loop (record.Load)
}

// loadOf is the load of the run that end closes (end may be nil: the header's load).
func loadOf(h *record.Header, end *record.RunEnd) runLoad {
	var l runLoad
	var c map[string]any
	if h != nil {
		c = h.Config
	}
	l.users = int(configNum(c, "concurrency"))
	l.rate = configNum(c, "rate")
	l.maxConc = int(configNum(c, "max_concurrency"))
	l.burstiness = configNum(c, "burstiness")
	l.requests = int(configNum(c, "requests"))
	l.arrival, _ = c["arrival"].(string)
	l.ramp, _ = c["ramp"].(string)
	if t, _ := c["trace"].(string); t != "" {
		l.trace = filepath.Base(t)
	}
	if h != nil && h.Load != nil && h.Sweep == "" {
		l.open = h.Load.Open
		if l.trace == "" && h.Load.Arrivals > 0 {
			l.trace = h.Workload.Dataset // a trace dataset (mooncake:file, burstgpt:file)
		}
	}
	if end != nil && (end.Concurrency > 0 || end.Rate > 0) {
		l.users, l.rate, l.open = end.Concurrency, end.Rate, end.Rate > 0
	}
	if l.open {
		l.users = 0
	}
	if l.rate > 0 {
		l.users = 0 // open loop: concurrency, if recorded too, is not the load
	}
	if l.arrival == "" {
		l.arrival = "poisson"
	}
	if l.burstiness <= 0 || l.arrival == "poisson" {
		l.burstiness = 1
	}
	return l
}

// openLoop reports whether requests were sent on a schedule rather than by users.
func (l runLoad) openLoop() bool { return l.open || l.rate > 0 || l.ramp != "" || l.trace != "" }

// summaryEnd is the run-end line of the one run s summarises, or nil.
func summaryEnd(s *metrics.Summary) *record.RunEnd {
	if len(s.Ends) == 1 {
		return &s.Ends[0]
	}
	return nil
}

// vllmRequestRate is vLLM's request_rate: the target rate, or the string "inf" (what vLLM
// writes for its default, infinite rate, which with max_concurrency N is a closed loop of N
// users).
func (l runLoad) vllmRequestRate() any {
	if l.rate > 0 {
		return l.rate
	}
	return "inf"
}

// vllmBurstiness is vLLM's burstiness, the gamma shape of the arrivals: 1 for Poisson (and
// vLLM's default, written even when the rate is infinite), the shape for gamma, and "inf" for
// constant gaps, which vLLM would write as Infinity (not valid JSON).
func (l runLoad) vllmBurstiness() any {
	if l.openLoop() && l.arrival == "constant" {
		return "inf"
	}
	return l.burstiness
}

// vllmMaxConcurrency is vLLM's max_concurrency: the users of a closed loop (vLLM's closed loop
// is an infinite rate capped at N in flight), the cap of an open loop, or null without one.
func (l runLoad) vllmMaxConcurrency() *int {
	switch {
	case !l.openLoop() && l.users > 0:
		return &l.users
	case l.openLoop() && l.maxConc > 0:
		return &l.maxConc
	}
	return nil
}

// numPrompts is vLLM's num_prompts: the requests asked for per run, or, for a timed run, the
// measured requests it sent.
func (l runLoad) numPrompts(s *metrics.Summary) int {
	if l.requests > 0 {
		return l.requests
	}
	return s.Measured
}

// tokenizerID is vLLM's tokenizer_id: the tokenizer that measured the prompts, or null.
func tokenizerID(h *record.Header) any {
	if h == nil {
		return nil
	}
	if h.Workload.Tokenizer != "" {
		return h.Workload.Tokenizer
	}
	if t, _ := h.Config["tokenizer"].(string); t != "" {
		return t
	}
	return nil
}

// setLoadKeys writes vLLM's load keys for the run that s summarises.
func setLoadKeys(o *object, h *record.Header, s *metrics.Summary) {
	l := loadOf(h, summaryEnd(s))
	o.set("num_prompts", l.numPrompts(s))
	o.set("request_rate", l.vllmRequestRate())
	o.set("burstiness", l.vllmBurstiness())
	o.set("max_concurrency", l.vllmMaxConcurrency())
}

// configNum reads a number of the header's configuration: float64 once decoded from a records
// file, any Go number when a caller built the map itself.
func configNum(c map[string]any, key string) float64 {
	switch v := c[key].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case json.Number:
		f, _ := v.Float64()
		return f
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}
