package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
		{"concurency", "concurrency", 1}, {"rate", "rtae", 2}, {"flaw", "lawn", 2},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"concurrency", "max-concurrency", "rate", "requests", "seed"}
	for _, c := range []struct{ typed, want string }{
		{"concurency", "concurrency"}, // one edit
		{"conc", "concurrency"},       // a prefix of three or more counts as one edit
		{"rates", "rate"},
		{"sed", "seed"},
		{"se", "seed"}, // two edits: "se" → "seed"
		{"xyzzy", ""},  // nothing close
		{"requestz", "requests"},
	} {
		if got := Nearest(c.typed, names, 2); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
	// ties go to the alphabetically first name
	if got := Nearest("ab", []string{"b", "a"}, 2); got != "a" {
		t.Errorf("tie: %q, want a", got)
	}
}
