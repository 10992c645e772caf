package workload

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// momentsOf is the sample mean and standard deviation of xs.
func momentsOf(xs []int) (mean, sd float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// TestDistMoments checks that drawn lengths have the asked mean and standard deviation within
// sampling error. The bound is 5 standard errors: SE(mean) = σ/√n and, for the SD, the
// normal's SE(s) ≈ σ/√(2n), widened for the log-normal by its kurtosis (SE(s²) =
// σ²·√((κ−1)/n), so SE(s) ≈ σ/2·√((κ−1)/n)). At 5 SE a correct sampler fails one seed in
// ~1.7 million per check; the seed is fixed, so the test is deterministic anyway.
func TestDistMoments(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		spec string
		kurt float64 // excess-free kurtosis κ of the distribution (3 for a normal)
	}{
		{"normal:512,128", 3},
		{"normal:2048,100", 3},
		{"lognormal:512,256", 0}, // computed below
		{"lognormal:128,32", 0},
	} {
		d, err := ParseDist("--input-dist", tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		k := tc.kurt
		if k == 0 { // log-normal: κ = e^{4σ²} + 2e^{3σ²} + 3e^{2σ²} − 3
			s2 := math.Log1p(d.SD * d.SD / (d.Mean * d.Mean))
			k = math.Exp(4*s2) + 2*math.Exp(3*s2) + 3*math.Exp(2*s2) - 3
		}
		rng := rand.New(rand.NewPCG(7, 11))
		xs := make([]int, n)
		for i := range xs {
			xs[i] = d.Draw(rng)
		}
		mean, sd := momentsOf(xs)
		seMean := d.SD / math.Sqrt(n)
		seSD := d.SD / 2 * math.Sqrt((k-1)/n)
		// rounding to whole tokens adds a uniform ±0.5 (variance 1/12) to each draw
		if math.Abs(mean-d.Mean) > 5*seMean+0.5 {
			t.Errorf("%s: mean %.2f, want %.0f ± %.2f", tc.spec, mean, d.Mean, 5*seMean+0.5)
		}
		if math.Abs(sd-d.SD) > 5*seSD+0.5 {
			t.Errorf("%s: sd %.2f, want %.0f ± %.2f", tc.spec, sd, d.SD, 5*seSD+0.5)
		}
		t.Logf("%s: n=%d mean %.2f (±%.2f) sd %.2f (±%.2f)", tc.spec, n, mean, 5*seMean, sd, 5*seSD)
	}
}

// TestDistClamped: every draw lies in [1, MaxLength], also for a spread far wider than the mean.
func TestDistClamped(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []Dist{{"normal", 4, 1000}, {"lognormal", 1, MaxLength}, {"normal", MaxLength, 1e6}} {
		for range 5000 {
			if x := d.Draw(rng); x < 1 || x > MaxLength {
				t.Fatalf("%v drew %d", d, x)
			}
		}
	}
}

// TestMixShares: each bucket is drawn in its share of the requests, within 5 binomial SE.
func TestMixShares(t *testing.T) {
	p, err := ParseMix("mix:512x128@0.7, 2048x256@0.2,64x32@0.1")
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	rng := rand.New(rand.NewPCG(3, 4))
	count := map[[2]int]int{}
	for range n {
		in, out := p.Draw(rng)
		count[[2]int{in, out}]++
	}
	for k, want := range map[[2]int]float64{{512, 128}: 0.7, {2048, 256}: 0.2, {64, 32}: 0.1} {
		got := float64(count[k]) / n
		if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 5*se {
			t.Errorf("bucket %v: share %.4f, want %.2f ± %.4f", k, got, want, 5*se)
		}
	}
	if len(count) != 3 {
		t.Errorf("drew %d distinct pairs, want 3", len(count))
	}
}

func TestParseLengthsErrors(t *testing.T) {
	for _, s := range []string{"normal", "normal:512", "normal:0,1", "normal:512,-1", "gauss:512,1", "normal:1e9,1", "normal:NaN,1", "lognormal:512,Inf"} {
		if _, err := ParseDist("--input-dist", s); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseDist(%q) = %v, want a one-line error", s, err)
		}
	}
	for _, s := range []string{"mix:", "mix:512", "mix:512x0@1", "mix:512x128@0", "mix:512x128@-1", "mix:512x128@x", "512x128", "mix:99999999x1"} {
		if _, err := ParseMix(s); err == nil {
			t.Errorf("ParseMix(%q): no error", s)
		}
	}
}

func TestReadPairs(t *testing.T) {
	p, err := ReadPairs(strings.NewReader("input_tokens,output_tokens\n# a comment\n100,10\n200, 20\n"), "l.csv")
	if err != nil || p.Len() != 2 || p.In[1] != 200 || p.Out[1] != 20 {
		t.Fatalf("ReadPairs = %+v, %v", p, err)
	}
	for _, bad := range []string{"", "in,out\n", "1,2\nx,3\n", "1\n", "1,0\n2,2\n"} {
		if _, err := ReadPairs(strings.NewReader(bad), "l.csv"); err == nil {
			t.Errorf("ReadPairs(%q): no error", bad)
		}
	}
}

// TestSyntheticLengths: a synthetic workload built with Lengths carries the drawn lengths,
// depends only on the seed, and leaves a workload without Lengths as it was.
func TestSyntheticLengths(t *testing.T) {
	d, _ := ParseDist("--input-dist", "normal:64,16")
	s := Synthetic{Count: 200, InputTokens: 64, OutputTokens: 16, Seed: 5, Lengths: &Lengths{In: &d}}
	a, _, err := s.Generate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := s.Generate(context.Background(), nil)
	distinct := map[int]bool{}
	for i := range a {
		if a[i].InputTokens != b[i].InputTokens || a[i].Prompt != b[i].Prompt {
			t.Fatal("the same seed built different prompts")
		}
		if got := len(strings.Fields(a[i].Prompt)); got != a[i].InputTokens {
			t.Fatalf("prompt %d has %d words, want %d", i, got, a[i].InputTokens)
		}
		if a[i].OutputTokens != 16 {
			t.Fatalf("output %d, want the fixed 16", a[i].OutputTokens)
		}
		distinct[a[i].InputTokens] = true
	}
	if len(distinct) < 20 {
		t.Errorf("only %d distinct input lengths", len(distinct))
	}
	plain := Synthetic{Count: 3, InputTokens: 64, OutputTokens: 16, Seed: 5}
	p1, _, _ := plain.Generate(context.Background(), nil)
	plain.Lengths = &Lengths{}
	p2, _, _ := plain.Generate(context.Background(), nil)
	for i := range p1 {
		if p1[i].Prompt != p2[i].Prompt {
			t.Fatal("an empty Lengths changed the prompts")
		}
	}
}
