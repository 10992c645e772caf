// Package conditions declares, reads and compares the facts that must stay fixed between a
// baseline and a later run: the model and its quantisation, the workload (prompt and output
// lengths, sampling, seed), the load, the tokenizer, batching limits, the hardware and driver,
// the server's version and flags, and the client machine.
//
// It is pure: it reads a records header (FromHeader), the user's declarations (ParseDeclared,
// LoadFile) and a server's answers to the probes its families declare (Families, FromAnswers),
// but never asks a server or this machine anything. That is package capture, so that compare
// and report, which import this package, stay free of the network.
//
// Every condition carries its source: detected (asked of the server or this machine), declared
// (--condition key=value, or a YAML file of them) or unknown. An unknown condition is listed,
// never dropped: "we could not see the GPU" is itself a fact a reader needs.
package conditions

import (
	"slices"
	"strings"

	"servebench/record"
)

// Sources of a condition's value.
const (
	Detected = "detected" // asked of the server, the run configuration or this machine
	Declared = "declared" // given by the user with --condition or --conditions
	Unknown  = "unknown"  // nobody could tell
)

// Condition keys. A key is a dotted path whose first segment is its group; compare decides
// from the group whether a difference makes two runs incomparable (see Blocking).
const (
	Model        = "model"
	Quantization = "model.quantization"
	DType        = "model.dtype"
	MaxModelLen  = "model.max_model_len"
	Tokenizer    = "tokenizer"

	MaxNumSeqs          = "batching.max_num_seqs"
	MaxNumBatchedTokens = "batching.max_num_batched_tokens"
	KVCacheTokens       = "batching.kv_cache_tokens"

	GPUName   = "gpu.name"
	GPUCount  = "gpu.count"
	GPUMemory = "gpu.memory"
	GPUDriver = "gpu.driver"

	ServerFamily = "server.family"
	ServerVer    = "server.version"
	ServerCommit = "server.commit"
	// ServerFlags stands for the whole group of server.flag.* keys when none was detected.
	ServerFlags = "server.flags"
	// FlagPrefix starts the key of every detected server flag, e.g. server.flag.tp_size.
	FlagPrefix = "server.flag."

	WorkloadHash = "workload.hash"
	// WorkloadNonce is the per-invocation nonce in the generated prompt text: it differs
	// between invocations by design, and so does the text, hence the hash (see Diff).
	WorkloadNonce = "workload.nonce"

	// ObservedPrefix starts the key of a figure of the server's load state when it was asked
	// (Ollama: loaded or not, the memory it holds): an observation of the run, not a condition.
	ObservedPrefix = "observed."

	ClientCPU     = "client.cpu"
	ClientCores   = "client.cores"
	ClientOS      = "client.os"
	ClientKernel  = "client.kernel"
	ClientVersion = "client.servebench"
	ClientGo      = "client.go"
)

// Expected lists the conditions every run should state. Complete adds the missing ones as
// unknown, so that what could not be seen is said.
var Expected = []string{
	Model, Quantization, MaxModelLen, Tokenizer, MaxNumSeqs,
	GPUName, GPUDriver, ServerFamily, ServerVer, ServerFlags,
}

// Set is a list of conditions, at most one per key. Its zero value is an empty set.
type Set []record.Condition

// Get returns the condition with key k.
func (s Set) Get(k string) (record.Condition, bool) {
	for _, c := range s {
		if c.Key == k {
			return c, true
		}
	}
	return record.Condition{}, false
}

// Value returns the value of key k, or "" when absent or unknown.
func (s Set) Value(k string) string {
	c, _ := s.Get(k)
	return c.Value
}

// Put sets a condition. A new value replaces an old one, except that an unknown never
// replaces a known value: a probe that failed must not erase what another one saw.
func (s *Set) Put(c record.Condition) {
	if c.Source == "" {
		c.Source = Detected
	}
	if c.Value == "" {
		c.Source = Unknown
	}
	for i := range *s {
		if (*s)[i].Key != c.Key {
			continue
		}
		if c.Source != Unknown || (*s)[i].Source == Unknown {
			(*s)[i] = c
		}
		return
	}
	*s = append(*s, c)
}

// Add sets key to value with the given source (see Put).
func (s *Set) Add(key, value, source string) {
	s.Put(record.Condition{Key: key, Value: value, Source: source})
}

// Merge puts every condition of each set in order: later sets win (declared over detected).
func Merge(sets ...[]record.Condition) Set {
	var out Set
	for _, set := range sets {
		for _, c := range set {
			out.Put(c)
		}
	}
	return out
}

// Complete adds every Expected key that is missing as unknown (server.flags only when no
// server.flag.* key is present) and sorts the set by key.
func Complete(s Set) Set {
	out := slices.Clone(s)
	for _, k := range Expected {
		if _, ok := out.Get(k); ok {
			continue
		}
		if k == ServerFlags && slices.ContainsFunc(out, func(c record.Condition) bool { return strings.HasPrefix(c.Key, FlagPrefix) }) {
			continue
		}
		out.Add(k, "", Unknown)
	}
	out.Sort()
	return out
}

// SplitObserved separates the conditions of s from its observations (ObservedPrefix keys, the
// load state discovery saw), which a header keeps apart because they describe the moment, not
// what must stay fixed.
func SplitObserved(s Set) (conds, observed Set) {
	for _, c := range s {
		if strings.HasPrefix(c.Key, ObservedPrefix) {
			observed = append(observed, c)
		} else {
			conds = append(conds, c)
		}
	}
	return conds, observed
}

// Sort orders the set by key, so that headers and golden files are deterministic.
func (s Set) Sort() {
	slices.SortFunc(s, func(a, b record.Condition) int { return strings.Compare(a.Key, b.Key) })
}
