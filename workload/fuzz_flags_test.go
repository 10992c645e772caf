package workload

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzLengths: no --lengths value (mix:… or a file's bytes) panics, every error is one line,
// and a parsed mix draws only its own pairs, with finite cumulative weights.
func FuzzLengths(f *testing.F) {
	f.Add("mix:512x128@0.7,2048x256@0.3", []byte("input_tokens,output_tokens\n100,10\n"))
	f.Add("mix:8x2@1e308,16x2@1e308", []byte("\"1\",\"2\"\r\n# c\n\n3,4,5\n"))
	f.Add("mix:8x2@5e-324,16x2", []byte("\x00\x00\x00"))
	f.Add("mix:1x1@NaN", []byte("1,0\n"))
	f.Fuzz(func(t *testing.T, mix string, file []byte) {
		for _, read := range []func() (*Pairs, error){
			func() (*Pairs, error) { return ParseMix(mix) },
			func() (*Pairs, error) { return ReadPairs(bytes.NewReader(file), "l.csv") },
		} {
			p, err := read()
			checkOneLine(t, err)
			if err != nil {
				continue
			}
			if p.Len() == 0 || math.IsInf(p.cum[p.Len()-1], 0) || !(p.cum[p.Len()-1] > 0) {
				t.Fatalf("%d pairs, total weight %v", p.Len(), p.cum[len(p.cum)-1])
			}
			rng := rand.New(rand.NewPCG(1, 1))
			for range 8 {
				in, out := p.Draw(rng)
				if in < 1 || in > MaxLength || out < 1 || out > MaxLength {
					t.Fatalf("drew %d x %d", in, out)
				}
			}
		}
	})
}

// FuzzLoRAModules: no --lora-modules value panics, every error is one line, and a parsed
// mix's shares are finite and add up to 1.
func FuzzLoRAModules(f *testing.F) {
	f.Add("a1:0.5,a2:0.3,a3", "")
	f.Add("a1:1e308,a2:1e308", "round-robin")
	f.Add("a:5e-324,b:1.7976931348623157e308", "random")
	f.Add(":1,,a:-0", "x")
	f.Fuzz(func(t *testing.T, list, selection string) {
		m, err := ParseLoRAMix(list, selection)
		checkOneLine(t, err)
		if err != nil || m.Empty() {
			return
		}
		sum := 0.0
		for _, s := range m.Shares() {
			if math.IsNaN(s) || s < 0 || s > 1 {
				t.Fatalf("shares %v of %v", m.Shares(), m.Weights)
			}
			sum += s
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("shares %v add up to %v", m.Shares(), sum)
		}
		reqs := make([]Request, 4)
		m.Assign(reqs, 1, 0)
		for _, r := range reqs {
			if r.Adapter == "" {
				t.Fatal("a request got no adapter")
			}
		}
	})
}
