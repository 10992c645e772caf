package pacer

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Ramp is an arrival schedule whose rate changes from From to To req/s over Over, then stays
// at To. Shape "linear" moves the rate by equal steps per second; "exp" multiplies it by equal
// factors per second (a straight line on a log axis, so every octave of load gets equal time).
//
// A ramp is a time change of a unit-rate process: with Λ(t) the expected arrivals by t (the
// integral of the rate), request n is due at Λ⁻¹(u_n), where u_n is the offset of request n in
// seconds of Unit, a pacer of rate 1. A Constant{1} unit gives evenly spread arrivals; a
// seeded Poisson or gamma unit gives the same burstiness as the flat schedule, at a moving
// rate. Pure like every pacer: Due never reads the clock.
type Ramp struct {
	From, To float64       // req/s at offset 0 and at Over
	Over     time.Duration // how long the ramp lasts (servebench run: --duration)
	Exp      bool          // exponential rather than linear
	Unit     Pacer         // unit-rate arrivals; nil means Constant{Rate: 1}
}

// Due implements Pacer.
func (r Ramp) Due(n int) (time.Duration, bool) {
	unit := r.Unit
	if unit == nil {
		unit = Constant{Rate: 1}
	}
	u, ok := unit.Due(n)
	if !ok {
		return 0, false
	}
	return time.Duration(r.inverse(u.Seconds()) * float64(time.Second)), true
}

// inverse solves Λ(t) = u for t, in seconds.
//
// Linear: rate(t) = a + b·t with b = (To − From)/D, so Λ(t) = a·t + b·t²/2 and
// t = 2u / (a + √(a² + 2bu)) (the root of the quadratic written so that b = 0 is no special
// case and no cancellation occurs).
// Exponential: rate(t) = a·k^(t/D) with k = To/From, so Λ(t) = a·D/ln k · (k^(t/D) − 1) and
// t = D/ln k · ln(1 + u·ln k/(a·D)).
// After D the rate is To: t = D + (u − Λ(D))/To.
func (r Ramp) inverse(u float64) float64 {
	a, d := r.From, r.Over.Seconds()
	total := r.cumulative(d)
	if u >= total {
		return d + (u-total)/r.To
	}
	if r.Exp && r.To != r.From {
		lk := math.Log(r.To / a)
		return d / lk * math.Log1p(u*lk/(a*d))
	}
	b := (r.To - a) / d
	return 2 * u / (a + math.Sqrt(a*a+2*b*u))
}

// cumulative is Λ(t) for 0 ≤ t ≤ Over: the expected arrivals by offset t seconds.
func (r Ramp) cumulative(t float64) float64 {
	a, d := r.From, r.Over.Seconds()
	if r.Exp && r.To != r.From {
		lk := math.Log(r.To / a)
		return a * d / lk * math.Expm1(t*lk/d)
	}
	return a*t + (r.To-a)/d*t*t/2
}

// ParseRamp reads a ramp flag value "linear:FROM..TO" or "exp:FROM..TO" (rates in req/s),
// ramping over the given duration. unit is the unit-rate arrival process (nil: evenly spread).
func ParseRamp(s string, over time.Duration, unit Pacer) (Ramp, error) {
	shape, rng, ok := strings.Cut(s, ":")
	lo, hi, ok2 := strings.Cut(rng, "..")
	if !ok || !ok2 || (shape != "linear" && shape != "exp") {
		return Ramp{}, fmt.Errorf("--ramp %q: want linear:FROM..TO or exp:FROM..TO (req/s)", s)
	}
	from, err1 := strconv.ParseFloat(lo, 64)
	to, err2 := strconv.ParseFloat(hi, 64)
	if err1 != nil || err2 != nil || !(from > 0) || !(to > 0) || math.IsInf(from, 0) || math.IsInf(to, 0) {
		return Ramp{}, fmt.Errorf("--ramp %q: rates must be positive numbers", s)
	}
	if over <= 0 {
		return Ramp{}, fmt.Errorf("--ramp needs --duration: the ramp lasts the whole duration")
	}
	return Ramp{From: from, To: to, Over: over, Exp: shape == "exp", Unit: unit}, nil
}
