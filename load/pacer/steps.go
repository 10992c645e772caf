package pacer

import "time"

// Steps is an arrival schedule in stages: Rates[i] req/s for Durs[i], one after the other,
// the last rate kept after the last stage (run --stages with rates). Like Ramp it is a time
// change of Unit, a unit-rate process: with Λ(t) the expected arrivals by t (piecewise
// linear), request n is due at Λ⁻¹(u_n), so a seeded Poisson unit gives Poisson arrivals in
// every stage and a Constant{1} unit evenly spread ones. Pure: Due never reads the clock.
type Steps struct {
	Rates []float64
	Durs  []time.Duration
	Unit  Pacer // nil means Constant{Rate: 1}
}

// Due implements Pacer.
func (p Steps) Due(n int) (time.Duration, bool) {
	unit := p.Unit
	if unit == nil {
		unit = Constant{Rate: 1}
	}
	u, ok := unit.Due(n)
	if !ok || len(p.Rates) == 0 {
		return 0, false
	}
	x, t := u.Seconds(), 0.0
	for i, r := range p.Rates {
		d := p.Durs[i].Seconds()
		if i == len(p.Rates)-1 || x < r*d {
			return time.Duration((t + x/r) * float64(time.Second)), true
		}
		x -= r * d
		t += d
	}
	return 0, false // not reached
}
