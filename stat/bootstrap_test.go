package stat

import (
	"math"
	"testing"
)

// OneSide's interval of one side equals TwoLevel's interval of that side when both sides are
// the same runs (the pooled spread is then the side's own, on twice the degrees of freedom:
// so OneSide's is wider, by the t quantiles' ratio).
func TestOneSideAgainstTwoLevel(t *testing.T) {
	v := []RunValue{{Log: math.Log(10)}, {Log: math.Log(11)}, {Log: math.Log(10.5)}}
	c, lo, hi, sd, assumed := OneSide(v, 0.05)
	if assumed || math.Abs(c-math.Exp(meanLog(v))) > 1e-12 || !(lo < c && c < hi) {
		t.Fatalf("OneSide = %v [%v, %v], assumed %v", c, lo, hi, assumed)
	}
	r := TwoLevel(v, v, 0.05)
	// same centre; the half-widths on the log scale are in the ratio of t(2)/t(4)
	want := TQuantile(0.975, 2) / TQuantile(0.975, 4)
	got := math.Log(hi/c) / math.Log(r.BaseHi/r.Base)
	if math.Abs(got-want) > 1e-9 || math.Abs(sd-r.RunSD) > 1e-12 {
		t.Fatalf("half-width ratio %v, want %v; run sd %v vs %v", got, want, sd, r.RunSD)
	}
	// one run: the assumed run-to-run spread
	if _, lo1, hi1, sd1, a1 := OneSide(v[:1], 0.05); !a1 || sd1 != AssumedRunSD || !(lo1 < 10 && hi1 > 10) {
		t.Fatalf("one run: [%v, %v] sd %v assumed %v", lo1, hi1, sd1, a1)
	}
}
