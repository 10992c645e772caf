package runspec

import (
	"net"
	"strconv"
	"strings"
)

// StandardOTLP is the --otlp-listen value that listens on OTLP's standard ports (gRPC
// 4317, HTTP 4318) on loopback.
const StandardOTLP = "standard"

// OTLPAddrs are the addresses --otlp-listen names: standard's two, or the one given, a bare
// :PORT or PORT on loopback (a receiver listens beyond the machine only when named so).
func (s *Spec) OTLPAddrs() []string {
	switch a := s.OTLPListen; {
	case a == "":
		return nil
	case a == StandardOTLP:
		return []string{"127.0.0.1:4317", "127.0.0.1:4318"}
	case !strings.Contains(a, ":"):
		return []string{"127.0.0.1:" + a}
	case strings.HasPrefix(a, ":"):
		return []string{"127.0.0.1" + a}
	default:
		return []string{a}
	}
}

// validateSpans checks the trace-context and OTLP receiver settings.
func (s *Spec) validateSpans() error {
	if h := s.SessionHeader; h != "" && !validHeaderName(h) {
		return Usagef("--session-header %q: not a header name", h)
	}
	if s.OTLPWait < 0 {
		return Usagef("--otlp-wait %v: want 0 or more", s.OTLPWait)
	}
	if s.OTLPListen == "" {
		return nil
	}
	if s.NoTraceContext {
		return Usagef("--otlp-listen joins spans by the trace id each request carries: drop --no-trace-context")
	}
	for _, a := range s.OTLPAddrs() {
		_, port, err := net.SplitHostPort(a)
		if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 0 || p > 65535 {
			return Usagef("--otlp-listen %q: want HOST:PORT, :PORT or %s", s.OTLPListen, StandardOTLP)
		}
	}
	return nil
}

// validHeaderName reports whether h is an HTTP header name (RFC 9110 token characters).
func validHeaderName(h string) bool {
	for _, c := range h {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return h != ""
}
