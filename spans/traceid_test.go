package spans

import (
	"encoding/hex"
	"regexp"
	"testing"
)

var traceparentRE = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)

func TestNextIsW3CAndOurs(t *testing.T) {
	k, other := NewIDs(), NewIDs()
	seen := map[string]bool{}
	for range 1000 {
		tp, id := k.Next()
		if !traceparentRE.MatchString(tp) || tp[3:35] != id {
			t.Fatalf("traceparent %q, trace id %q", tp, id)
		}
		if seen[id] {
			t.Fatalf("trace id %s drawn twice", id)
		}
		seen[id] = true
		b, _ := hex.DecodeString(id)
		if !k.Ours(b) {
			t.Fatalf("%s not recognised by its own key", id)
		}
		if other.Ours(b) {
			t.Fatalf("%s recognised by another key", id)
		}
		b[15] ^= 1
		if k.Ours(b) {
			t.Fatalf("a changed id still passes")
		}
	}
	if k.Ours(nil) || k.Ours(make([]byte, 8)) {
		t.Fatal("a short id passes")
	}
}

func BenchmarkNext(b *testing.B) {
	k := NewIDs()
	for b.Loop() {
		k.Next()
	}
}
