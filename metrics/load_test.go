package metrics

import (
	"strings"
	"testing"
	"time"

	"servebench/record"
)

func rec(sent, first int64, class string) *record.Record {
	r := &record.Record{Phase: record.PhaseMeasure, Scheduled: sent - 1, Dispatched: sent - 1, Sent: sent, Done: first + 10,
		Events: []record.Event{{T: first, N: 1}}, OutputTokens: 1, ErrorClass: class}
	return r
}

func TestAttainmentWindowAndEnds(t *testing.T) {
	a := NewAccumulator(Options{SLO: SLO{TTFT: 50}, Window: 2 * time.Second})
	hdr := &record.Header{Ends: []record.RunEnd{
		{Run: 0, StopDetail: "5 failed requests reached --max-errors 5", Quality: &record.Quality{SchedP99: 2e6, SchedMax: 3e6, CPUMax: 0.95, Cores: 2}},
		{Run: 7, StopDetail: "another run"},
	}}
	a.SetHeader(hdr)
	a.Add(rec(100, 120, ""))                  // meets
	a.Add(rec(200, 300, ""))                  // misses TTFT
	a.Add(rec(300, 310, record.ErrHTTP5xx))   // a failure is a miss
	a.Add(rec(400, 410, record.ErrCancelled)) // ours: not in the denominator
	a.Add(&record.Record{Phase: record.PhaseCooldown})
	s := a.Summary()
	if s.SLOAttainment == nil || *s.SLOAttainment != 1.0/3 {
		t.Errorf("attainment %v, want 1/3", s.SLOAttainment)
	}
	if s.Window != 2*time.Second || *s.RequestThroughput != 1 || s.CooldownDiscarded != 1 {
		t.Errorf("window %v, throughput %v, cooldown %d", s.Window, *s.RequestThroughput, s.CooldownDiscarded)
	}
	all := strings.Join(Texts(s.Warnings), "\n")
	for _, want := range []string{"sending stopped early: 5 failed", "scheduling latency was 2.00 ms", "used 95% of 2 cores"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "another run") {
		t.Error("a RunEnd of another run was used")
	}
}

func TestUnsentArrivalsAreNamed(t *testing.T) {
	a := NewAccumulator(Options{MaxConcurrency: 4})
	// two shards of one run, merged: one warning with their total
	a.SetHeader(&record.Header{Ends: []record.RunEnd{{Run: 0, Unsent: 30}, {Run: 0, Unsent: 7}}})
	a.Add(rec(100, 120, ""))
	w := strings.Join(Texts(a.Summary().Warnings), "\n")
	if !strings.Contains(w, "37 arrivals of the schedule were due before sending stopped but never sent (they waited for a slot of the --max-concurrency cap of 4)") {
		t.Errorf("warnings do not name the unsent arrivals:\n%s", w)
	}
	if strings.Count(w, "never sent") != 1 {
		t.Errorf("the unsent arrivals of one run are named more than once:\n%s", w)
	}
}

// With the kernel clock, event times leave the client's delays out: the scheduling warning
// says so, and reads without a receive time are named when they are more than 1%.
func TestKernelClockWarnings(t *testing.T) {
	warn := func(q record.Quality) string {
		a := NewAccumulator(Options{})
		a.SetHeader(&record.Header{Ends: []record.RunEnd{{Run: 0, Quality: &q}}})
		a.Add(rec(100, 120, ""))
		return strings.Join(Texts(a.Summary().Warnings), "\n")
	}
	slow := record.Quality{SchedP99: 20e6, SchedMax: 30e6, Cores: 2}
	if w := warn(slow); !strings.Contains(w, "timestamps may include the client's own delays") {
		t.Errorf("read clock: %s", w)
	}
	slow.Stamps = 1000
	if w := warn(slow); !strings.Contains(w, "event times come from the kernel's receive times") || strings.Contains(w, "when read") {
		t.Errorf("kernel clock: %s", w)
	}
	slow.ReadStamps = 50
	if w := warn(slow); !strings.Contains(w, "5.0% of event times (50 of 1000) were taken when read") || !strings.Contains(w, "timestamps may include") {
		t.Errorf("kernel clock with 5%% read stamps: %s", w)
	}
}

func TestLatenessNamesTheCause(t *testing.T) {
	late := func(opt Options) string {
		a := NewAccumulator(opt)
		for i := range 10 {
			r := rec(int64(i)*1e6+50e6, int64(i)*1e6+60e6, "")
			r.Scheduled = int64(i) * 1e6
			a.Add(r)
		}
		return strings.Join(Texts(a.Summary().Warnings), "\n")
	}
	if w := late(Options{MaxConcurrency: 1}); !strings.Contains(w, "cap of 1, which was full") {
		t.Errorf("full cap: %s", w)
	}
	if w := late(Options{MaxConcurrency: 100}); !strings.Contains(w, "never full, so the load generator itself") {
		t.Errorf("cap never full: %s", w)
	}
	if w := late(Options{}); !strings.Contains(w, "no concurrency cap was set") {
		t.Errorf("no cap: %s", w)
	}
}
