package client

// InputsObserver is an Observer that also records how many inputs one request carried: the
// texts of an embeddings batch or the documents of a rerank request. The pooling backends
// report through it; an Observer without it records none.
type InputsObserver interface {
	Inputs(n int)
}

// ReportInputs calls o.Inputs(n) when o is an InputsObserver.
func ReportInputs(o Observer, n int) {
	if r, ok := o.(InputsObserver); ok {
		r.Inputs(n)
	}
}

// Inputs implements InputsObserver, passing the call on when the wrapped Observer takes it.
func (s *Serial) Inputs(n int) {
	if s.lock() {
		ReportInputs(s.obs, n)
	}
	s.mu.Unlock()
}

var _ InputsObserver = (*Serial)(nil)
