// Package pacer computes arrival schedules for open-loop load. A pacer is pure: it never
// reads the clock or sleeps. Due(n) is the intended send offset of request n from the run
// start, so a schedule is absolute (a late sender does not drift the rest of the schedule).
package pacer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Pacer gives the intended send offset of request n (0-based). ok is false when the schedule
// has no request n.
type Pacer interface {
	Due(n int) (offset time.Duration, ok bool)
}

// Func adapts a function to Pacer.
type Func func(n int) (time.Duration, bool)

// Due calls f.
func (f Func) Due(n int) (time.Duration, bool) { return f(n) }

// Constant sends one request every 1/Rate seconds, the first at offset 0.
type Constant struct{ Rate float64 }

// Due implements Pacer: offset(n) = n / rate.
func (c Constant) Due(n int) (time.Duration, bool) {
	return time.Duration(float64(n) / c.Rate * float64(time.Second)), true
}

// Gamma is a renewal process whose gaps are gamma distributed with mean 1/Rate and shape
// Burstiness (vLLM's --burstiness): 1 is a Poisson process, < 1 burstier, > 1 more regular.
// Offsets are the cumulative sums of seeded gaps, computed lazily and cached, so Due is
// deterministic for a seed and pure of the clock. Not safe for concurrent use.
type Gamma struct {
	rate, shape float64
	rng         *rand.Rand
	offsets     []float64 // seconds; offsets[0] = 0
}

// NewPoisson returns a Poisson arrival process (exponential gaps) of the given rate.
func NewPoisson(rate float64, seed int64) *Gamma { return NewGamma(rate, 1, seed) }

// NewGamma returns a gamma arrival process of the given rate and burstiness (shape).
func NewGamma(rate, burstiness float64, seed int64) *Gamma {
	return &Gamma{rate: rate, shape: burstiness, rng: rand.New(rand.NewPCG(uint64(seed), 0x5e4fe)), offsets: []float64{0}}
}

// Due implements Pacer.
func (g *Gamma) Due(n int) (time.Duration, bool) {
	for len(g.offsets) <= n {
		// gap ~ Gamma(shape k, scale θ) with mean kθ = 1/rate
		gap := gammaVariate(g.rng, g.shape) / (g.shape * g.rate)
		g.offsets = append(g.offsets, g.offsets[len(g.offsets)-1]+gap)
	}
	return time.Duration(g.offsets[n] * float64(time.Second)), true
}

// gammaVariate draws from Gamma(k, 1) by Marsaglia and Tsang's method (k < 1 boosted with
// U^(1/k)). Exponential(1) is the special case k = 1.
func gammaVariate(rng *rand.Rand, k float64) float64 {
	if k == 1 {
		return rng.ExpFloat64()
	}
	if k < 1 {
		u := rng.Float64()
		return gammaVariate(rng, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// New returns the pacer for an arrival kind: "constant", "poisson" or "gamma".
func New(kind string, rate, burstiness float64, seed int64) (Pacer, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("rate must be a positive number, got %v", rate)
	}
	switch kind {
	case "constant":
		return Constant{Rate: rate}, nil
	case "poisson", "":
		return NewPoisson(rate, seed), nil
	case "gamma":
		if !(burstiness > 0) {
			return nil, fmt.Errorf("--burstiness must be positive, got %v", burstiness)
		}
		return NewGamma(rate, burstiness, seed), nil
	}
	return nil, fmt.Errorf("unknown arrival %q (want constant, poisson or gamma)", kind)
}
