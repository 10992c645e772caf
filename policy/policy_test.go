package policy

import "testing"

func TestPolicyLookups(t *testing.T) {
	p := Policy{Version: "v", Rules: []Rule{
		{ID: "a", Constants: []Constant{{Name: "x", Value: 1}, {Name: "y", Value: 2}}},
		{ID: "b"},
		{ID: "c", Constants: []Constant{{Name: "x", Value: 3}, {Name: "z", Value: 4, Kind: OptionDefault}}},
	}}
	if got := p.Index("b"); got != 1 {
		t.Errorf("Index(b) = %d, want 1", got)
	}
	if got := p.Index("none"); got != -1 {
		t.Errorf("Index(none) = %d, want -1", got)
	}
	if !p.Has("c") || p.Has("none") {
		t.Errorf("Has: c %v, none %v", p.Has("c"), p.Has("none"))
	}
	if got := p.Constants(); got != 4 {
		t.Errorf("Constants() = %d, want 4", got)
	}
	if got := p.Tuned(); got != 3 {
		t.Errorf("Tuned() = %d, want 3 (z is an option default)", got)
	}
	if v, ok := p.Constant("x"); !ok || v != 1 {
		t.Errorf("Constant(x) = %g, %v; want the first rule's, 1", v, ok)
	}
	if v, ok := p.Constant("z"); !ok || v != 4 {
		t.Errorf("Constant(z) = %g, %v; want 4", v, ok)
	}
	if _, ok := p.Constant("none"); ok {
		t.Error("Constant(none) found")
	}
}
