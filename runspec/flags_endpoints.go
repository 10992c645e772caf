package runspec

import (
	"github.com/spf13/pflag"
)

// bindEndpointsFlags registers the flags of the non-generating endpoints (runspec/endpoints.go).
func bindEndpointsFlags(fs *pflag.FlagSet, s *Spec) {
	fs.IntVar(&s.BatchSize, "batch-size", s.BatchSize, "--api openai-embeddings: inputs per request; --api rerank: documents per request (beside one query). Each prompt of --input-tokens is cut into this many pieces (default 1)")
}
