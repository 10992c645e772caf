package pacer

import (
	"testing"
	"time"
)

// TestStepsRates: each stage gets its rate × its duration of arrivals, and offsets never
// decrease across a boundary.
func TestStepsRates(t *testing.T) {
	p := Steps{Rates: []float64{2, 10, 4}, Durs: []time.Duration{5 * time.Second, 2 * time.Second, 5 * time.Second}}
	per := make([]int, 3)
	prev := time.Duration(-1)
	for n := 0; ; n++ {
		d, ok := p.Due(n)
		if !ok {
			t.Fatal("the schedule ended")
		}
		if d < prev {
			t.Fatalf("offset %d went back: %v < %v", n, d, prev)
		}
		prev = d
		switch {
		case d < 5*time.Second:
			per[0]++
		case d < 7*time.Second:
			per[1]++
		case d < 12*time.Second:
			per[2]++
		}
		if d >= 12*time.Second {
			break
		}
	}
	if per[0] != 10 || per[1] != 20 || per[2] != 20 {
		t.Errorf("arrivals per stage %v, want [10 20 20]", per)
	}
}
