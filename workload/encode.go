package workload

import "io"

// Encode writes the requests as JSONL in the prompts-file format (one line per request), the
// encoding Save writes and Hash hashes; ReadFile and Read read it back.
func Encode(w io.Writer, reqs []Request) error { return encodeAll(w, reqs) }
