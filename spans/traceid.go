// Package spans gives every request a W3C trace context and joins the spans a server
// exports for it (OpenTelemetry, OTLP) to the request's record: what the server says its
// queue, prefill and decode took, beside the client's own stamps (docs/telemetry.md, "Server
// spans").
package spans

import (
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"math/rand/v2"
)

// IDs makes the trace ids of one servebench process and recognises them. A trace id is 16
// bytes: the last 8 are random, the first 8 a keyed hash of them under a key drawn at start
// and never sent. An exporter that sends spans of other traces (another client's traffic, a
// hostile or broken exporter) cannot make an id that passes Ours without the key, so the
// receiver keeps no table of the ids sent and the load layer registers nothing per request.
// The zero value is not usable; make one with NewIDs.
type IDs struct {
	seed maphash.Seed
}

// NewIDs draws a fresh key.
func NewIDs() *IDs { return &IDs{seed: maphash.MakeSeed()} }

// TraceParentHeader is the W3C Trace Context request header.
const TraceParentHeader = "traceparent"

// Next makes a new trace: its traceparent header value (version 00, a fresh parent span id,
// the sampled flag set so that the server records and exports its spans) and its trace id as
// 32 lower-case hex digits, the form records keep. math/rand/v2's global source is safe for
// concurrent use and per-thread, so the draw takes no lock.
func (k *IDs) Next() (traceparent, traceID string) {
	var id [16]byte
	low := rand.Uint64()
	binary.BigEndian.PutUint64(id[8:], low)
	binary.BigEndian.PutUint64(id[:8], k.tag(id[8:]))
	span := rand.Uint64() | 1 // an all-zero span id is invalid
	var b [55]byte            // "00-" 32 "-" 16 "-01"
	copy(b[:], "00-")
	hex.Encode(b[3:35], id[:])
	b[35] = '-'
	binary.BigEndian.PutUint64(id[:8], span)
	hex.Encode(b[36:52], id[:8])
	copy(b[52:], "-01")
	tp := string(b[:])
	return tp, tp[3:35]
}

// Ours reports whether id (16 bytes) is a trace id this IDs made.
func (k *IDs) Ours(id []byte) bool {
	return len(id) == 16 && binary.BigEndian.Uint64(id[:8]) == k.tag(id[8:])
}

func (k *IDs) tag(low []byte) uint64 { return maphash.Bytes(k.seed, low) }
