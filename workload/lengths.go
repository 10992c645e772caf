package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// MaxLength bounds every drawn length in tokens (runspec.MaxTokens: no model has a longer
// context); every draw is clamped to [1, MaxLength].
const MaxLength = 1 << 24

// Dist is the distribution of one length (input or output tokens): normal or log-normal of
// a given mean and standard deviation, both of the token count itself (also for the
// log-normal: MEAN,SD are what a user reads off a histogram of lengths, not the parameters
// of its logarithm; AIPerf's --synthetic-input-tokens-mean/-stddev mean the same).
type Dist struct {
	Kind     string // "normal" or "lognormal"
	Mean, SD float64
}

// ParseDist reads "normal:MEAN,SD" or "lognormal:MEAN,SD" (tokens). name is the flag, for
// the message.
func ParseDist(name, s string) (Dist, error) {
	kind, args, ok := strings.Cut(s, ":")
	if !ok || (kind != "normal" && kind != "lognormal") {
		return Dist{}, fmt.Errorf("%s %q: want normal:MEAN,SD or lognormal:MEAN,SD (tokens)", name, s)
	}
	m, sd, ok := strings.Cut(args, ",")
	mean, err1 := strconv.ParseFloat(strings.TrimSpace(m), 64)
	dev, err2 := strconv.ParseFloat(strings.TrimSpace(sd), 64)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Dist{}, fmt.Errorf("%s %q: want %s:MEAN,SD, two numbers of tokens", name, s, kind)
	case !(mean >= 1 && mean <= MaxLength):
		return Dist{}, fmt.Errorf("%s %q: the mean must be in [1, %d]", name, s, MaxLength)
	case !(dev >= 0 && dev <= MaxLength):
		return Dist{}, fmt.Errorf("%s %q: the standard deviation must be in [0, %d]", name, s, MaxLength)
	}
	return Dist{Kind: kind, Mean: mean, SD: dev}, nil
}

// Draw draws one length, rounded and clamped to [1, MaxLength]. A log-normal of mean m and
// standard deviation s has σ² = ln(1 + s²/m²) and μ = ln m − σ²/2 for its logarithm.
// Clamping at 1 raises the mean of a normal whose SD is close to its mean: such a spec
// draws fewer short prompts than asked, and the header's lengths say what was drawn.
func (d Dist) Draw(rng *rand.Rand) int {
	var x float64
	switch d.Kind {
	case "lognormal":
		s2 := math.Log1p(d.SD * d.SD / (d.Mean * d.Mean))
		x = math.Exp(math.Log(d.Mean) - s2/2 + math.Sqrt(s2)*rng.NormFloat64())
	default:
		x = d.Mean + d.SD*rng.NormFloat64()
	}
	return clampLength(x)
}

// String is the spec the Dist was parsed from.
func (d Dist) String() string { return fmt.Sprintf("%s:%g,%g", d.Kind, d.Mean, d.SD) }

func clampLength(x float64) int {
	switch {
	case !(x >= 1): // also NaN
		return 1
	case x > MaxLength:
		return MaxLength
	}
	return int(math.Round(x))
}

// Pairs is a discrete distribution of (input, output) length pairs: a mix of buckets with
// weights (--lengths mix:…), or the rows of a file, each of weight 1 (--lengths file:…).
// Lengths drawn from Pairs are joint: a long prompt keeps its own output length.
type Pairs struct {
	In, Out []int
	cum     []float64 // cumulative weights, the last one is the total
}

// Len is the number of pairs.
func (p *Pairs) Len() int { return len(p.In) }

// add appends a pair of weight w.
func (p *Pairs) add(in, out int, w float64) {
	total := 0.0
	if n := len(p.cum); n > 0 {
		total = p.cum[n-1]
	}
	p.In, p.Out, p.cum = append(p.In, in), append(p.Out, out), append(p.cum, total+w)
}

// Draw draws one pair: a uniform point on the cumulative weights, found by bisection.
func (p *Pairs) Draw(rng *rand.Rand) (in, out int) {
	u := rng.Float64() * p.cum[len(p.cum)-1]
	lo, hi := 0, len(p.cum)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if p.cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return p.In[lo], p.Out[lo]
}

// maxMixBuckets bounds a mix: more buckets than a flag can sensibly hold is a mistake.
const maxMixBuckets = 1 << 16

// ParseMix reads the buckets of "mix:INxOUT@W,INxOUT@W,…": input and output lengths in
// tokens and a weight each (any positive numbers, 0.7 or 70; they are normalised). A bucket
// without @W has weight 1.
func ParseMix(s string) (*Pairs, error) {
	body, ok := strings.CutPrefix(s, "mix:")
	if !ok || body == "" {
		return nil, fmt.Errorf("--lengths %q: want mix:INxOUT@WEIGHT,… (e.g. mix:512x128@0.7,2048x256@0.3)", s)
	}
	p := &Pairs{}
	var ins, outs []int
	var ws []float64
	for b := range strings.SplitSeq(body, ",") {
		pair, wt, hasW := strings.Cut(strings.TrimSpace(b), "@")
		is, os, ok := strings.Cut(pair, "x")
		in, err1 := parseLength(is)
		out, err2 := parseLength(os)
		w := 1.0
		var err3 error
		if hasW {
			w, err3 = strconv.ParseFloat(wt, 64)
		}
		switch {
		case !ok || err1 != nil || err2 != nil:
			return nil, fmt.Errorf("--lengths %q: bucket %q: want INxOUT@WEIGHT with lengths in [1, %d]", s, b, MaxLength)
		case err3 != nil || !(w > 0) || math.IsInf(w, 0):
			return nil, fmt.Errorf("--lengths %q: bucket %q: the weight must be a positive number", s, b)
		case len(ws) >= maxMixBuckets:
			return nil, fmt.Errorf("--lengths %q: more than %d buckets", s, maxMixBuckets)
		}
		ins, outs, ws = append(ins, in), append(outs, out), append(ws, w)
	}
	// normalised first: the running sum of raw weights can overflow (1e308 twice is +Inf)
	for i, sh := range Shares(ws) {
		p.add(ins[i], outs[i], sh)
	}
	return p, nil
}

// parseLength reads a length in tokens in [1, MaxLength].
func parseLength(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > MaxLength {
		return 0, errors.New("bad length")
	}
	return n, nil
}

// maxLengthRows bounds a --lengths file: a million observed requests are plenty of samples.
const maxLengthRows = 1 << 20

// maxLengthLineBytes bounds a line of a --lengths file: a row is two numbers, and a file
// without line ends (/dev/zero) must fail at the bound, not be read whole into memory.
const maxLengthLineBytes = DefaultMaxTraceLineBytes

// ReadPairs reads an empirical length file: CSV rows "input_tokens,output_tokens" (a first
// row whose first field is not a number is a header; blank lines and lines starting with # are
// skipped; further fields are ignored and a field may be quoted). Each row is one observation,
// drawn with equal weight. It reads one line at a time, each at most maxLengthLineBytes, and
// at most maxLengthRows rows. name is the file, for the message.
func ReadPairs(r io.Reader, name string) (*Pairs, error) {
	lr := newLineReader(r, maxLengthLineBytes)
	p := &Pairs{}
	for row := 1; ; {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lr.line, err)
		}
		b := bytes.TrimSpace(line)
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		f0, rest, ok := bytes.Cut(b, []byte(","))
		f1, _, _ := bytes.Cut(rest, []byte(","))
		if !ok {
			return nil, fmt.Errorf("%s:%d: want input_tokens,output_tokens", name, lr.line)
		}
		in, err1 := parseLength(unquote(f0))
		out, err2 := parseLength(unquote(f1))
		if err1 != nil || err2 != nil {
			if _, nerr := strconv.Atoi(unquote(f0)); row == 1 && nerr != nil {
				row++
				continue // a header: its first field is not a number
			}
			return nil, fmt.Errorf("%s:%d: want two lengths in [1, %d], got %.40q,%.40q", name, lr.line, MaxLength, f0, f1)
		}
		row++
		if p.Len() >= maxLengthRows {
			return nil, fmt.Errorf("%s: more than %d rows", name, maxLengthRows)
		}
		p.add(in, out, 1)
	}
	if p.Len() == 0 {
		return nil, fmt.Errorf("%s: no rows of input_tokens,output_tokens", name)
	}
	return p, nil
}

// unquote is a CSV field without its surrounding spaces and double quotes.
func unquote(f []byte) string {
	s := strings.TrimSpace(string(f))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// Lengths draws each synthetic request's (input, output) lengths: a joint Pairs, or each
// length on its own from In and Out (nil: the fixed length ± the range ratio, as before).
type Lengths struct {
	In, Out *Dist
	Pairs   *Pairs
}

// draw gives request lengths from rng, falling back to the fixed lengths l and range ratio r
// for a side without a distribution.
func (l *Lengths) draw(rng *rand.Rand, in, out int, r float64) (int, int) {
	if l.Pairs != nil {
		return l.Pairs.Draw(rng)
	}
	i, o := drawLength(rng, in, r), drawLength(rng, out, r)
	if l.In != nil {
		i = l.In.Draw(rng)
	}
	if l.Out != nil {
		o = l.Out.Draw(rng)
	}
	return i, o
}
