package compare

import (
	"math"
	"strings"
	"testing"
)

// TestTailFamilyHolm checks Holm's step-down over the judged tails by hand: p = 0.03, 0.2,
// 0.5 adjust to 0.09, 0.4, 0.5 (none moved at 5%), and p = 0.01, 0.02, 0.5 to 0.03, 0.04,
// 0.5 (two moved); a median row and a tail not judged take no part.
func TestTailFamilyHolm(t *testing.T) {
	tail := func(p float64) Row {
		return Row{Metric: TTFTp99, P: p, Significant: p < 0.05, Change: Inconclusive}
	}
	for _, c := range []struct {
		ps    []float64
		want  []float64
		moved []bool
	}{
		{[]float64{0.03, 0.2, 0.5}, []float64{0.09, 0.4, 0.5}, []bool{false, false, false}},
		{[]float64{0.5, 0.02, 0.01}, []float64{0.5, 0.04, 0.03}, []bool{false, true, true}},
		{[]float64{0.04, 0.04, 0.04}, []float64{0.12, 0.12, 0.12}, []bool{false, false, false}},
	} {
		r := &Result{Alpha: 0.05, Rows: []Row{{Metric: TTFTp50, P: 0.001, Significant: true, Change: Inconclusive}}}
		for _, p := range c.ps {
			r.Rows = append(r.Rows, tail(p))
		}
		r.Rows = append(r.Rows, Row{Metric: ITLp99, P: 0.001, Significant: true, Change: NotJudged})
		r.tailFamily(0.05)
		if r.Rows[0].FamilyP != 0 || r.Rows[len(r.Rows)-1].FamilyP != 0 {
			t.Errorf("ps %v: a median or an unjudged tail got a family p", c.ps)
		}
		for i, want := range c.want {
			row := r.Rows[i+1]
			if math.Abs(row.FamilyP-want) > 1e-12 || row.tailMoved() != c.moved[i] || blocks(row) != c.moved[i] {
				t.Errorf("ps %v: tail %d: family p %g moved %v blocks %v, want %g %v", c.ps, i, row.FamilyP, row.tailMoved(), blocks(row), want, c.moved[i])
			}
		}
	}
}

// TestChanceTailNamed: a verdict of no significant change beside a tail that moved alone but
// not as one of the family names it, with both p values.
func TestChanceTailNamed(t *testing.T) {
	r := &Result{Alpha: 0.05, Verdict: NoChange, Rows: []Row{
		{Metric: TTFTp99, P: 0.03, Significant: true, Change: Inconclusive},
		{Metric: ITLp99, P: 0.4, Change: Inconclusive},
		{Metric: E2Ep99, P: 0.6, Change: "~"},
	}}
	r.tailFamily(0.05)
	if verdict(r) != NoChange {
		t.Fatalf("verdict %s, want no significant change", verdict(r))
	}
	got := r.OpenTails()
	for _, want := range []string{"TTFT p99 (p=0.03 alone, 0.09 over the 3 tails)", "Holm", "ITL p99 open"} {
		if !strings.Contains(got, want) {
			t.Errorf("OpenTails() = %q, want it to hold %q", got, want)
		}
	}
}
