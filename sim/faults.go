package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Fault kinds. Each names a wire behaviour a real server (or a proxy in front of it) shows
// when things go wrong, so that servebench's error classification can be tested end to end.
const (
	FaultHTTP429       = "http_429"       // 429 with a JSON error body before any streaming
	FaultHTTP500       = "http_500"       // 500 with a JSON error body
	FaultHTTP503       = "http_503"       // 503 with a JSON error body
	FaultErrorEvent    = "error_event"    // HTTP 200, then `data: {"error":{...}}` mid-stream, then end
	FaultDisconnect    = "disconnect"     // cut the connection after ARG tokens (default 3), no [DONE]
	FaultStall         = "stall"          // pause ARG (default 2s) mid-stream
	FaultSlowHeaders   = "slow_headers"   // delay the response headers by ARG (default 1s)
	FaultMalformedJSON = "malformed_json" // one extra event whose data is not valid JSON
	FaultNoDone        = "no_done"        // omit `data: [DONE]`, end the body normally
	FaultMultiToken    = "multi_token"    // ARG tokens per event (default 3)
	FaultRoleChunk     = "role_chunk"     // role-only first chat chunk (llama.cpp/vLLM style)
	FaultZeroUsage     = "zero_usage"     // zero usage on every chunk, real usage only at the end (Ollama style)
	FaultKeepalive     = "keepalive"      // ": keep-alive" comment lines between events
	FaultAbort         = "abort"          // HTTP 200, then a chunk with finish_reason "abort" after ARG tokens, then [DONE] (vLLM, SGLang)
	FaultErrorLine     = "error_line"     // HTTP 200, then llama.cpp's `error: {"code":500,...}` line after ARG tokens, [DONE], close
	FaultHiddenTokens  = "hidden_tokens"  // every ARG-th token (default 4) in a chunk with empty text, its text held back to the next
	FaultToolCalls     = "tool_calls"     // chat: the output as a streamed delta.tool_calls function call; completions: no effect
)

// FaultKinds lists every fault kind, in the order --fault-rate draws from.
var FaultKinds = []string{
	FaultHTTP429, FaultHTTP500, FaultHTTP503, FaultErrorEvent, FaultDisconnect, FaultStall,
	FaultSlowHeaders, FaultMalformedJSON, FaultNoDone, FaultMultiToken, FaultRoleChunk,
	FaultZeroUsage, FaultKeepalive, FaultAbort, FaultErrorLine, FaultHiddenTokens, FaultToolCalls,
}

// Fault is one fault with its optional argument (a token count or a duration).
type Fault struct {
	Kind  string
	Count int           // disconnect, multi_token, hidden_tokens, and where mid-stream faults strike (0 = default)
	Delay time.Duration // stall, slow_headers (0 = default)
}

// ParseFault parses KIND[=ARG], the form of the X-Sim-Fault header. ARG is a token count for
// disconnect, multi_token, error_event, malformed_json, abort and error_line (the token after
// which the fault strikes), the period of the hidden tokens for hidden_tokens (at least 2: a
// text-free chunk every ARG tokens), and a duration for stall and slow_headers.
func ParseFault(s string) (Fault, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), "=")
	f := Fault{Kind: kind}
	if !isFaultKind(kind) {
		return f, fmt.Errorf("unknown fault %q (known: %s)", kind, strings.Join(FaultKinds, ", "))
	}
	if !hasArg {
		return f.withDefaults(), nil
	}
	switch kind {
	case FaultStall, FaultSlowHeaders:
		d, err := time.ParseDuration(arg)
		if err != nil || d < 0 {
			return f, fmt.Errorf("fault %s: argument %q is not a duration", kind, arg)
		}
		f.Delay = d
	case FaultDisconnect, FaultMultiToken, FaultErrorEvent, FaultMalformedJSON, FaultAbort, FaultErrorLine, FaultHiddenTokens:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || (kind == FaultMultiToken && n < 1) || (kind == FaultHiddenTokens && n < 2) {
			return f, fmt.Errorf("fault %s: argument %q is not a valid token count", kind, arg)
		}
		f.Count = n
	default:
		return f, fmt.Errorf("fault %s takes no argument", kind)
	}
	return f.withDefaults(), nil
}

// withDefaults fills the documented default arguments.
func (f Fault) withDefaults() Fault {
	switch f.Kind {
	case FaultDisconnect, FaultMultiToken:
		if f.Count == 0 {
			f.Count = 3
		}
	case FaultHiddenTokens:
		if f.Count == 0 {
			f.Count = 4
		}
	case FaultStall:
		if f.Delay == 0 {
			f.Delay = 2 * time.Second
		}
	case FaultSlowHeaders:
		if f.Delay == 0 {
			f.Delay = time.Second
		}
	}
	return f
}

// String formats the fault as KIND[=ARG].
func (f Fault) String() string {
	switch {
	case f.Delay != 0:
		return f.Kind + "=" + f.Delay.String()
	case f.Count != 0:
		return f.Kind + "=" + strconv.Itoa(f.Count)
	}
	return f.Kind
}

func isFaultKind(k string) bool {
	for _, x := range FaultKinds {
		if x == k {
			return true
		}
	}
	return false
}

// FaultProb is a fault with the share of requests that get it.
type FaultProb struct {
	Fault
	P float64
}

// FaultList is the value of the repeatable --fault flag: KIND=P or KIND:ARG=P (for example
// disconnect=0.05 or stall:500ms=0.01). It implements flag.Value.
type FaultList []FaultProb

// String formats the list as the flag would accept it, comma-separated.
func (l *FaultList) String() string {
	if l == nil {
		return ""
	}
	parts := make([]string, len(*l))
	for i, f := range *l {
		spec := f.Kind
		if a := f.Fault.String(); a != f.Kind {
			spec = f.Kind + ":" + strings.TrimPrefix(a, f.Kind+"=")
		}
		parts[i] = spec + "=" + strconv.FormatFloat(f.P, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Set adds one KIND[:ARG]=P entry.
func (l *FaultList) Set(s string) error {
	spec, p, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want KIND=P or KIND:ARG=P, got %q", s)
	}
	prob, err := strconv.ParseFloat(p, 64)
	if err != nil || prob < 0 || prob > 1 || math.IsNaN(prob) {
		return fmt.Errorf("probability %q must be in [0,1]", p)
	}
	f, err := ParseFault(strings.Replace(spec, ":", "=", 1))
	if err != nil {
		return err
	}
	*l = append(*l, FaultProb{Fault: f, P: prob})
	return nil
}

// faultDrawer draws a fault per request, reproducibly from the seed and the request's arrival
// order (not from a shared RNG, so the draw of request n does not depend on goroutine timing
// of earlier draws beyond their count).
type faultDrawer struct {
	seed uint64
	rate float64
	list FaultList
	n    atomic.Uint64
}

// draw returns the fault for the next request, if any.
func (d *faultDrawer) draw() (Fault, bool) {
	n := d.n.Add(1)
	u := unitFloat(mix64(d.seed ^ n*0x9e3779b97f4a7c15))
	cum := 0.0
	for _, f := range d.list {
		cum += f.P
		if u < cum {
			return f.Fault, true
		}
	}
	if d.rate <= 0 {
		return Fault{}, false
	}
	r := mix64(d.seed ^ n*0xc2b2ae3d27d4eb4f ^ 0x5bd1e995)
	if unitFloat(r) >= d.rate {
		return Fault{}, false
	}
	k := FaultKinds[mix64(r)%uint64(len(FaultKinds))]
	return Fault{Kind: k}.withDefaults(), true
}

// mix64 is the splitmix64 finaliser: a cheap, well-mixed hash of a 64-bit value.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitFloat maps a hash to [0,1).
func unitFloat(x uint64) float64 { return float64(x>>11) / (1 << 53) }
