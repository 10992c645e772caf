package conditions

import (
	"slices"
	"strings"

	"servebench/record"
)

// Kinds of difference between a baseline's conditions and a candidate's.
const (
	// KindBlocking makes the runs not comparable: the workload, load, sampling, model,
	// hardware, server version, flags or a declared condition moved.
	KindBlocking = "blocking"
	// KindExpected is a blocking difference the user named with --expect-change.
	KindExpected = "expected"
	// KindInfo is worth knowing but does not decide comparability: the client machine, the
	// simulator's speed parameters (sim.*, which stand for the server's own performance).
	KindInfo = "info"
	// KindUnknown means one side could not tell; the reader must judge.
	KindUnknown = "unknown"
)

// Difference is one condition whose value differs between base and candidate.
type Difference struct {
	Key        string
	Base, Cand record.Condition // Source is Unknown (and Value "") on a side that lacks the key
	Kind       string
}

// infoGroups are the key groups that never make runs incomparable: the client machine, the
// simulator's speed, and observations of the server's load state (a file that kept them
// among its conditions compares as informative, never as not comparable).
var infoGroups = []string{"client.", "sim.", ObservedPrefix}

// Blocking reports whether a difference in key makes two runs not comparable. Everything a
// server, model, workload or load is made of blocks; so do user-declared keys of any name
// (they were declared because they must stay fixed). Only the client side and the simulator's
// speed parameters are informative.
func Blocking(key string) bool {
	if key == WorkloadNonce || key == LaunchCommand {
		return false
	}
	for _, g := range infoGroups {
		if strings.HasPrefix(key, g) {
			return false
		}
	}
	return true
}

// Diff lists every condition that differs, in key order. expect names the changes the user
// meant to make (--expect-change): a key matches when it equals an expected name, lies under
// it (gpu matches gpu.name), or ends with it (output_tokens matches workload.output_tokens).
// A name may be a comma-separated list, and a setting that other conditions of either side's
// server follow from expects them too (llama.cpp's np: see Derivation).
// The workload hash follows from the workload's settings, so its difference is expected too
// when a workload.*, sampling.* or load.* difference is. It also follows from the text, which
// a per-invocation nonce changes by design: where the nonces differ, the hash's difference is
// information, and comparability rests on the lengths, distributions and settings, each a
// condition of its own.
func Diff(base, cand []record.Condition, expect []string) []Difference {
	b, c := Merge(base), Merge(cand)
	expect = expectedSet(expect, b, c)
	keys := map[string]bool{}
	for _, x := range append(append(Set{}, b...), c...) {
		keys[x.Key] = true
	}
	var out []Difference
	for k := range keys {
		bc, bok := b.Get(k)
		cc, cok := c.Get(k)
		if !bok {
			bc = record.Condition{Key: k, Source: Unknown}
		}
		if !cok {
			cc = record.Condition{Key: k, Source: Unknown}
		}
		if bc.Value == cc.Value {
			continue
		}
		d := Difference{Key: k, Base: bc, Cand: cc, Kind: KindBlocking}
		switch {
		case !Blocking(k):
			d.Kind = KindInfo
		case bc.Value == "" || cc.Value == "":
			d.Kind = KindUnknown
		case Matches(k, expect):
			d.Kind = KindExpected
		}
		out = append(out, d)
	}
	sortDiffs(out)
	explainHash(out)
	return out
}

// explainHash marks a workload hash difference expected when a workload-defining difference
// is expected.
func explainHash(ds []Difference) {
	explained, nonced := false, false
	for _, d := range ds {
		nonced = nonced || d.Key == WorkloadNonce
		// the cache salt is sent with the workload but kept out of its hash on purpose
		if d.Kind == KindExpected && d.Key != WorkloadHash && d.Key != "sampling.cache_salt" && hasAnyPrefix(d.Key, "workload.", "sampling.", "load.") {
			explained = true
		}
	}
	for i := range ds {
		switch {
		case ds[i].Key != WorkloadHash:
		case nonced:
			ds[i].Kind = KindInfo
		case ds[i].Kind == KindBlocking && explained:
			ds[i].Kind = KindExpected
		}
	}
}

// Matches reports whether key is named by one of the expected names (see Diff). A name is
// also tried with hyphens read as underscores: keys use underscores where the flags they come
// from use hyphens (--arrival-clock is measurement.arrival_clock).
func Matches(key string, expect []string) bool {
	for _, e := range expect {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		for _, n := range []string{e, strings.ReplaceAll(e, "-", "_")} {
			if key == n || strings.HasPrefix(key, n+".") || strings.HasSuffix(key, "."+n) {
				return true
			}
		}
	}
	return false
}

func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func sortDiffs(ds []Difference) {
	slices.SortFunc(ds, func(a, b Difference) int { return strings.Compare(a.Key, b.Key) })
}
