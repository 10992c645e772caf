package runspec

import (
	"servebench/client/pooling"
)

// Endpoints beyond generation: --api openai-embeddings and rerank send each request as a
// batch of --batch-size inputs (embedding texts, or rerank documents beside one query) and
// generate nothing, so the output length and --fixed-output do not apply to them.

// DefaultBatchSize is --batch-size when it is not given: one input per request.
const DefaultBatchSize = 1

// Pooling reports whether the run's API generates nothing (embeddings, rerank).
func (s *Spec) Pooling() bool { return PoolingAPI(s.API) }

// PoolingAPI reports whether the API named api (canonical) generates nothing.
func PoolingAPI(api string) bool { return api == pooling.APIEmbeddings || api == pooling.APIRerank }

// Batch is the inputs (or documents) per request of a pooling run, 0 for any other.
func (s *Spec) Batch() int {
	switch {
	case !s.Pooling():
		return 0
	case s.BatchSize > 0:
		return s.BatchSize
	}
	return DefaultBatchSize
}

func (s *Spec) validateEndpoints() error {
	switch {
	case s.IsSet("batch-size") && s.BatchSize < 1 || s.BatchSize < 0:
		return Usagef("--batch-size %d: want at least 1 input per request", s.BatchSize)
	case s.BatchSize > 0 && !s.Pooling():
		return Usagef("--batch-size applies to --api %s and %s, not %s", pooling.APIEmbeddings, pooling.APIRerank, s.API)
	case s.BatchSize > 100000:
		return Usagef("--batch-size %d: at most 100000 inputs per request", s.BatchSize)
	}
	return nil
}

// resolveEndpoints drops what a pooling API cannot honour: nothing is generated, so no
// request can be "short". The output length stays (the workload generator wants one) but is
// never sent, and each pooling record's max_tokens is cleared (load/endpoints.go).
func (s *Spec) resolveEndpoints() {
	if s.Pooling() {
		s.FixedOutput = false
	}
}
