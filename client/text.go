package client

// TextObserver is an Observer that also takes the generated answer text, for a run that
// scores answers or checks them against a response format. Decoding the text costs time on
// every event, so a backend asks WantText once per stream and passes text only when it is
// wanted. A backend that cannot report text (every one but the OpenAI-compatible one, for
// now) never calls Text.
type TextObserver interface {
	// WantText reports whether the observer keeps the answer text.
	WantText() bool
	// Text is answer text (not reasoning) of the content event just reported, in order.
	Text(s string)
}

// WantsText returns o as a TextObserver when it is one and wants the text.
func WantsText(o Observer) (TextObserver, bool) {
	t, ok := o.(TextObserver)
	if !ok || !t.WantText() {
		return nil, false
	}
	return t, true
}

// WantText implements TextObserver, asking the wrapped Observer.
func (s *Serial) WantText() bool {
	want := false
	if s.lock() {
		if t, ok := s.obs.(TextObserver); ok {
			want = t.WantText()
		}
	}
	s.mu.Unlock()
	return want
}

// Text implements TextObserver, passing the text on when the wrapped Observer takes it.
func (s *Serial) Text(text string) {
	if s.lock() {
		if t, ok := s.obs.(TextObserver); ok {
			t.Text(text)
		}
	}
	s.mu.Unlock()
}

var _ TextObserver = (*Serial)(nil)
