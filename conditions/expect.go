package conditions

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"servebench/suggest"
)

// Derivation declares conditions that follow from one server setting: changing the setting
// moves them all, so naming it (--expect-change) expects every one of them. A family lists
// its own (Family.Derived): on another server the same condition may follow from nothing
// (vLLM's max_num_seqs moves no context length).
type Derivation struct {
	// Setting is the setting's own name, a key in the server.flag. group, which a server need
	// not state (llama.cpp's -np is server.flag.np; its /props says total_slots).
	Setting string
	// Names are other keys that stand for the setting: the condition that states it.
	Names []string
	// Keys are the conditions that follow from it.
	Keys []string
}

// names is the setting and every name that stands for it.
func (d Derivation) names() []string { return append([]string{d.Setting}, d.Names...) }

// llamaCppDerived: llama.cpp divides its context (-c) among its -np slots, and every slot's
// n_ctx is what /slots and /props state as the context per slot and the model length a
// request may use; /props' total_slots is -np.
var llamaCppDerived = []Derivation{
	{Setting: FlagPrefix + "np", Names: []string{FlagPrefix + "parallel", MaxNumSeqs},
		Keys: []string{MaxNumSeqs, MaxModelLen, FlagPrefix + "ctx_per_slot"}},
	{Setting: FlagPrefix + "ctx_size", Names: []string{MaxModelLen, FlagPrefix + "ctx_per_slot"},
		Keys: []string{MaxModelLen, FlagPrefix + "ctx_per_slot"}},
}

// vllmDerived: vLLM sizes its KV cache from --gpu-memory-utilization; the blocks it could
// allocate and the tokens they hold follow (see vllm).
var vllmDerived = []Derivation{
	{Setting: FlagPrefix + "gpu_memory_utilization", Keys: []string{FlagPrefix + "num_gpu_blocks", KVCacheTokens}},
}

// ExpectNames splits --expect-change values into names: each value may be a comma-separated
// list ("a,b,c"), and blanks are dropped.
func ExpectNames(values []string) []string {
	var out []string
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// derivations are the Derived of the families either side's server belongs to.
func derivations(sets ...Set) []Derivation {
	var out []Derivation
	for _, f := range families {
		if slices.ContainsFunc(sets, func(s Set) bool { return s.Value(ServerFamily) == f.Name }) {
			out = append(out, f.Derived...)
		}
	}
	return out
}

// expandExpect adds to the expected names the conditions that follow from a setting one of
// them names: its setting, or a key that stands for it, whole or by its last segments
// (np, max_num_seqs). A group name (batching) expects only its own keys.
func expandExpect(expect []string, ds []Derivation) []string {
	out := slices.Clone(expect)
	for _, d := range ds {
		if slices.ContainsFunc(expect, func(e string) bool { return namesSetting(e, d) }) {
			out = append(out, d.names()...)
			out = append(out, d.Keys...)
		}
	}
	return out
}

// namesSetting reports whether the name e names d's setting (see expandExpect).
func namesSetting(e string, d Derivation) bool {
	for _, k := range d.names() {
		for _, n := range []string{e, strings.ReplaceAll(e, "-", "_")} {
			if k == n || strings.HasSuffix(k, "."+n) {
				return true
			}
		}
	}
	return false
}

// declaredKeys are the condition keys servebench itself states, known even where a file
// lacks one, and the groups whose keys a server or the user names (server.flag.*, sim.*).
var declaredKeys = []string{
	Model, Quantization, DType, MaxModelLen, Tokenizer, MaxNumSeqs, MaxNumBatchedTokens, KVCacheTokens,
	GPUName, GPUCount, GPUMemory, GPUDriver, ServerFamily, ServerVer, ServerCommit, ServerFlags,
	WorkloadHash, WorkloadNonce, ClientCPU, ClientCores, ClientOS, ClientKernel, ClientVersion, ClientGo,
	strings.TrimSuffix(FlagPrefix, "."), "sim", "client", strings.TrimSuffix(ObservedPrefix, "."),
	"workload", "sampling", "load", "measurement", "model", "batching", "gpu", "server",
}

// CheckExpect checks the --expect-change names against the conditions of the files being
// compared (sets, one a side, with any condition the comparison adds): every name must name
// a key either side states, a key servebench declares (declaredKeys), or a setting that
// conditions of either side's server derive from. The error names the first unknown one and
// the known keys nearest it.
func CheckExpect(expect []string, sets ...Set) error {
	known := knownKeys(sets...)
	for _, e := range ExpectNames(expect) {
		if !namesAny(known, e) {
			return fmt.Errorf("--expect-change %q names no condition of these files; nearest: %s", e, strings.Join(nearest(e, known, 3), ", "))
		}
	}
	return nil
}

// namesAny reports whether the name e names one of keys (by Matches' rule).
func namesAny(keys []string, e string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return Matches(k, []string{e}) })
}

// knownKeys lists the keys the names are checked against (see CheckExpect), sorted, once each.
func knownKeys(sets ...Set) []string {
	keys := slices.Clone(declaredKeys)
	for _, s := range sets {
		for _, c := range s {
			keys = append(keys, c.Key)
		}
	}
	for _, d := range derivations(sets...) {
		keys = append(keys, d.names()...)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// nearest returns up to n of keys nearest the name e: by edit distance to the whole key or to
// as many of its last segments as e has (np is near server.flag.np), a key that starts with e
// (or whose last segments do) counting as one edit away.
func nearest(e string, keys []string, n int) []string {
	e = strings.ReplaceAll(e, "-", "_")
	type scored struct {
		key string
		d   int
	}
	var s []scored
	for _, k := range keys {
		s = append(s, scored{k, keyDistance(e, k)})
	}
	slices.SortStableFunc(s, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.key, b.key)) })
	var out []string
	for _, x := range s[:min(n, len(s))] {
		out = append(out, x.key)
	}
	return out
}

// keyDistance is the distance Nearest orders keys by.
func keyDistance(e, k string) int {
	segs := strings.Split(k, ".")
	tail := strings.Join(segs[max(0, len(segs)-strings.Count(e, ".")-1):], ".")
	d := min(suggest.Distance(e, k), suggest.Distance(e, tail))
	if strings.HasPrefix(k, e) || strings.HasPrefix(tail, e) {
		d = min(d, 1)
	}
	return d
}

// expectedSet is Diff's expected names: the given ones split (ExpectNames) and expanded by
// the derivations of either side's server.
func expectedSet(expect []string, b, c Set) []string {
	return expandExpect(ExpectNames(expect), derivations(b, c))
}
