package load

import "testing"

func TestRequestID(t *testing.T) {
	if got := RequestID(2, 15); got != "2-15" {
		t.Errorf("RequestID(2, 15) = %q, want 2-15", got)
	}
}
