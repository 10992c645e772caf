package load

import "servebench/client"

var _ client.InputsObserver = (*stamp)(nil)

// Inputs implements client.InputsObserver: the request's batch size, kept in its record. Only
// pooling requests report it, and they ask for no output, so the output length the workload
// carried (never sent) is cleared from the record.
func (s *stamp) Inputs(n int) { s.rec.Inputs, s.rec.MaxTokens = n, 0 }
