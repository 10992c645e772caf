package conditions

import (
	"strings"
	"testing"

	"servebench/record"
)

// llamaNP is a llama.cpp server's conditions at -c 4096 -np slots, as /props and /slots state
// them: each slot's context is 4096/np.
func llamaNP(np, perSlot string) []record.Condition {
	return []record.Condition{c(ServerFamily, LlamaCpp, Detected), c(ServerVer, "b11669", Detected),
		c(MaxNumSeqs, np, Detected), c(MaxModelLen, perSlot, Detected), c(FlagPrefix+"ctx_per_slot", perSlot, Detected),
		c(FlagPrefix+"metrics", "true", Detected), c(Model, "tiny.gguf", Detected)}
}

// blocking lists the keys of the differences of the kind blocking (or unknown).
func blocking(ds []Difference) []string {
	var out []string
	for _, d := range ds {
		if d.Kind == KindBlocking || d.Kind == KindUnknown {
			out = append(out, d.Key)
		}
	}
	return out
}

// TestExpectDerived: changing llama.cpp's -np 4 to -np 2 moves three conditions; naming the
// setting in any of its names expects all three, and naming one of them alone (the context
// per slot) expects only what follows from the context.
func TestExpectDerived(t *testing.T) {
	base, cand := llamaNP("4", "1024"), llamaNP("2", "2048")
	if got := blocking(Diff(base, cand, nil)); len(got) != 3 {
		t.Fatalf("-np 4 → 2 without --expect-change: blocking %v, want three keys", got)
	}
	for _, e := range []string{"batching.max_num_seqs", "max_num_seqs", "server.flag.np", "np", "parallel", "flag.np"} {
		if got := blocking(Diff(base, cand, []string{e})); len(got) != 0 {
			t.Errorf("--expect-change %s: still blocking %v", e, got)
		}
	}
	if got := blocking(Diff(base, cand, []string{"ctx_per_slot"})); strings.Join(got, " ") != MaxNumSeqs {
		t.Errorf("--expect-change ctx_per_slot: blocking %v, want only %s", got, MaxNumSeqs)
	}
	// a group expects its own keys only
	if got := blocking(Diff(base, cand, []string{"batching"})); len(got) != 2 {
		t.Errorf("--expect-change batching: blocking %v, want the two keys outside batching", got)
	}
	// the same keys on vLLM follow from nothing: max_num_seqs is its own setting there
	vb := []record.Condition{c(ServerFamily, VLLM, Detected), c(MaxNumSeqs, "4", Detected), c(MaxModelLen, "1024", Detected)}
	vc := []record.Condition{c(ServerFamily, VLLM, Detected), c(MaxNumSeqs, "2", Detected), c(MaxModelLen, "2048", Detected)}
	if got := blocking(Diff(vb, vc, []string{"max_num_seqs"})); strings.Join(got, " ") != MaxModelLen {
		t.Errorf("vLLM, --expect-change max_num_seqs: blocking %v, want %s", got, MaxModelLen)
	}
}

// TestExpectCommaList: one value may list several names.
func TestExpectCommaList(t *testing.T) {
	base := []record.Condition{c(ServerVer, "1", Detected), c(GPUName, "L4", Detected), c(Model, "a", Detected)}
	cand := []record.Condition{c(ServerVer, "2", Detected), c(GPUName, "H100", Detected), c(Model, "b", Detected)}
	if got := blocking(Diff(base, cand, []string{"server.version, gpu.name", "model"})); len(got) != 0 {
		t.Errorf("blocking %v, want none", got)
	}
	if got := ExpectNames([]string{"a,b,,c", " d ", ""}); strings.Join(got, "|") != "a|b|c|d" {
		t.Errorf("ExpectNames = %q", got)
	}
}

// TestCheckExpect: a name that names no condition of either side is an error naming the
// nearest known keys; names of present keys, groups, last segments, declared keys and the
// settings of either side's server pass.
func TestCheckExpect(t *testing.T) {
	base, cand := Set(llamaNP("4", "1024")), Set(llamaNP("2", "2048"))
	for _, ok := range []string{"np", "server.flag.np", "max_num_seqs", "batching", "server.version", "model.dtype",
		"server.flag", "ctx-per-slot", "np,server.version", "gpu.memory"} {
		if err := CheckExpect([]string{ok}, base, cand); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, near := range map[string]string{
		"server.flag.nq":     "server.flag.np",
		"max_num_seq":        MaxNumSeqs,
		"np,server.versoin":  ServerVer,
		"ctx_per_slots":      FlagPrefix + "ctx_per_slot",
		"server.flag.tp_siz": FlagPrefix,
	} {
		err := CheckExpect([]string{bad}, base, cand)
		if err == nil {
			t.Errorf("%q: no error", bad)
			continue
		}
		if !strings.Contains(err.Error(), "nearest: ") || !strings.Contains(err.Error(), near) {
			t.Errorf("%q: %v; want %s among the nearest", bad, err, near)
		}
	}
	// the setting is known only beside a server it belongs to
	vllm := Set{c(ServerFamily, VLLM, Detected)}
	if err := CheckExpect([]string{"server.flag.np"}, vllm, vllm); err == nil {
		t.Error("server.flag.np known beside vLLM")
	}
}
