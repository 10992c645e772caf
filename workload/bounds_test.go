package workload

import (
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// zeros is an endless stream of NUL bytes, as /dev/zero, that counts what was read of it.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestReadPairsEndlessLine: a --lengths file without line ends (/dev/zero) fails at the line
// bound with the line number, having read little more than that bound and allocated a
// bounded amount (it used to read 256 MiB whole and parse it as one CSV field: 1.37 GB).
func TestReadPairsEndlessLine(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine reads or builds hundreds of MB, many times the time under it")
	}
	z := &zeros{}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadPairs(z, "/dev/zero")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "/dev/zero:1:") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want a one-line error at /dev/zero:1", err)
	}
	if limit := int64(maxLengthLineBytes) + 1<<20; z.n > limit {
		t.Errorf("read %d bytes of an endless line, want at most %d", z.n, limit)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*maxLengthLineBytes {
		t.Errorf("allocated %d bytes for an endless line, want at most %d", alloc, 8*maxLengthLineBytes)
	}
	// endless rows stop at the row bound
	rows := io.LimitReader(strings.NewReader(strings.Repeat("1,1\n", maxLengthRows+1)), 1<<30)
	if _, err := ReadPairs(rows, "rows.csv"); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("%d rows: %v", maxLengthRows+1, err)
	}
	// quoted fields and a header still read
	p, err := ReadPairs(strings.NewReader("\"in\",\"out\"\r\n\"100\", 10,extra\n"), "q.csv")
	if err != nil || p.Len() != 1 || p.In[0] != 100 || p.Out[0] != 10 {
		t.Errorf("quoted: %+v %v", p, err)
	}
}

// TestHugeWeightsDoNotOverflow: weights near the largest float64 (whose sum is +Inf) and
// weights near the smallest are shares like any other, for --lengths mix:… and --lora-modules.
func TestHugeWeightsDoNotOverflow(t *testing.T) {
	const n = 4000
	for _, w := range []string{"1e308", "1.7e308", "5e-324", "1"} {
		p, err := ParseMix("mix:8x2@" + w + ",16x2@" + w)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		eight := 0
		for range n {
			if in, _ := p.Draw(rng); in == 8 {
				eight++
			}
		}
		m, err := ParseLoRAMix("a1:"+w+",a2:"+w, "")
		if err != nil {
			t.Fatal(err)
		}
		reqs := make([]Request, n)
		m.Assign(reqs, 3, 0)
		a1 := 0
		for _, r := range reqs {
			if r.Adapter == "a1" {
				a1++
			}
		}
		// half each, within 5 binomial standard errors (sqrt(n/4) = 31.6)
		for name, got := range map[string]int{"mix 8x2": eight, "lora a1": a1} {
			if math.Abs(float64(got)-n/2) > 5*math.Sqrt(n/4.0) {
				t.Errorf("weights %s: %s drawn %d of %d, want about half", w, name, got, n)
			}
		}
		for _, s := range m.Shares() {
			if s != 0.5 {
				t.Errorf("weights %s: shares %v, want 0.5 each", w, m.Shares())
			}
		}
	}
}

// TestSharesFinite: shares of any finite positive weights are finite and add up to 1.
func TestSharesFinite(t *testing.T) {
	for _, ws := range [][]float64{{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64}, {math.MaxFloat64, 5e-324}, {1e-300, 1e-300}, {3}} {
		sum := 0.0
		for _, s := range Shares(ws) {
			if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
				t.Fatalf("Shares(%v) = %v", ws, Shares(ws))
			}
			sum += s
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("Shares(%v) sum to %v", ws, sum)
		}
	}
}
