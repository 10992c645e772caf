package workload

import (
	"math"
	"testing"
)

func TestParseLoRAMix(t *testing.T) {
	m, err := ParseLoRAMix("a1:0.5, a2:0.3,a3", "")
	if err != nil || m.Selection != LoRARandom || len(m.Names) != 3 || m.Weights[2] != 1 {
		t.Fatalf("%+v %v", m, err)
	}
	if got := m.String(); got != "a1:0.2778,a2:0.1667,a3:0.5556" {
		t.Errorf("String %q", got)
	}
	for _, bad := range [][2]string{{"a:0", ""}, {"a:-1", ""}, {"a:x", ""}, {"a,a", ""}, {":1", ""}, {"a,,b", ""}, {"a:NaN", ""}, {"a:Inf", ""}, {"a", "weighted"}} {
		if _, err := ParseLoRAMix(bad[0], bad[1]); err == nil {
			t.Errorf("%q %q accepted", bad[0], bad[1])
		}
	}
	if m, err := ParseLoRAMix("", ""); err != nil || !m.Empty() {
		t.Errorf("empty list: %+v %v", m, err)
	}
}

// TestAssignLoRA: weighted draws come out near their weights and are reproducible, round robin
// is exact, a session keeps one adapter, and a request that names its own keeps it.
func TestAssignLoRA(t *testing.T) {
	m, _ := ParseLoRAMix("a1:0.5,a2:0.3,a3:0.2", "")
	draw := func(part int) []Request {
		reqs := make([]Request, 10000)
		m.Assign(reqs, 7, part)
		return reqs
	}
	reqs := draw(0)
	count := map[string]int{}
	for _, r := range reqs {
		count[r.Adapter]++
	}
	for name, w := range map[string]float64{"a1": 0.5, "a2": 0.3, "a3": 0.2} {
		if got := float64(count[name]) / 10000; math.Abs(got-w) > 4.5*math.Sqrt(w*(1-w)/10000) {
			t.Errorf("%s: %.4f, want %.1f", name, got, w)
		}
	}
	again, other := draw(0), draw(1)
	same, differ := true, false
	for i := range reqs {
		same = same && again[i].Adapter == reqs[i].Adapter
		differ = differ || other[i].Adapter != reqs[i].Adapter
	}
	if !same || !differ {
		t.Errorf("same seed and part reproduce: %v; another part differs: %v", same, differ)
	}
	rr, _ := ParseLoRAMix("x:9,y", LoRARoundRobin)
	sess := []Request{{Session: 1, Turn: 1}, {Session: 2, Turn: 1}, {Session: 1, Turn: 2}, {Adapter: "own"}, {Session: 2, Turn: 2}, {}}
	rr.Assign(sess, 1, 0)
	want := []string{"x", "y", "x", "own", "y", "x"}
	for i, r := range sess {
		if r.Adapter != want[i] {
			t.Errorf("request %d: adapter %q, want %q", i, r.Adapter, want[i])
		}
	}
}
