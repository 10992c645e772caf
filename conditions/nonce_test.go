package conditions

import (
	"testing"

	"servebench/record"
)

// TestNonceNotACondition: two runs whose text differs only by their nonces differ in hash and
// nonce, both informative; without differing nonces a hash difference still blocks.
func TestNonceNotACondition(t *testing.T) {
	h := func(hash, nonce string) []record.Condition {
		return FromHeader(&record.Header{Workload: record.Workload{Hash: hash, Source: "synthetic", Seed: 1, Nonce: nonce}})
	}
	kinds := func(ds []Difference) map[string]string {
		out := map[string]string{}
		for _, d := range ds {
			out[d.Key] = d.Kind
		}
		return out
	}
	got := kinds(Diff(h("sha256:a", "00000000000000a1"), h("sha256:b", "00000000000000b2"), nil))
	if got[WorkloadHash] != KindInfo || got[WorkloadNonce] != KindInfo || len(got) != 2 {
		t.Errorf("nonces differ: %v, want hash and nonce informative", got)
	}
	got = kinds(Diff(h("sha256:a", ""), h("sha256:b", "00000000000000b2"), nil))
	if got[WorkloadHash] != KindInfo {
		t.Errorf("a file without a nonce against one with: %v, want the hash informative", got)
	}
	got = kinds(Diff(h("sha256:a", "00000000000000a1"), h("sha256:b", "00000000000000a1"), nil))
	if got[WorkloadHash] != KindBlocking {
		t.Errorf("the same nonce, another hash: %v, want blocking", got)
	}
}
