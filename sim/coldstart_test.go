package sim

import (
	"bufio"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// wantStep runs one step of sc and fails the test on a wrong duration or phase change.
func wantStep(t *testing.T, sc *startupCost, base time.Duration, tokens int, start time.Time, want time.Duration, wantPh stepPhase) {
	t.Helper()
	got, ph := sc.next(base, tokens, start)
	if got != want || ph != wantPh {
		t.Errorf("step %d (%d tokens, at +%v): %v %+v, want %v %+v", sc.steps, tokens, start.Sub(sc.origin), got, ph, want, wantPh)
	}
}

func TestColdStepsCostFactor(t *testing.T) {
	sc := newStartupCost(&Config{ColdSteps: 3, ColdFactor: 2.5})
	t0, base := time.Unix(1000, 0), 8*time.Millisecond
	// the factor fades linearly: 2.5, 2, 1.5 × over the three cold steps, then 1
	for i, f := range []float64{2.5, 2, 1.5, 1, 1, 1} {
		want, ph := time.Duration(f*float64(base)), stepPhase{}
		ph.coldEnd = i == 2
		// 600 tokens: too large for a graph, so only the cold factor shows
		wantStep(t, sc, base, 600, t0.Add(time.Duration(i)*base), want, ph)
	}
	if p := &sc.phases; p.coldSteps != 3 || p.steps.Load() != 6 || p.captures.Load() != 0 {
		t.Errorf("phases: %d cold, %d steps, %d captures", p.coldSteps, p.steps.Load(), p.captures.Load())
	}
}

func TestGraphCaptureOncePerShape(t *testing.T) {
	capture, base := 50*time.Millisecond, 6*time.Millisecond
	sc := newStartupCost(&Config{GraphCapture: capture})
	t0 := time.Unix(1000, 0)
	for i, tc := range []struct {
		tokens int
		fresh  bool // a shape not seen before: it pays the capture
	}{
		{3, true}, {4, false}, {3, false}, // bucket 4
		{5, true}, {8, false}, // bucket 8
		{1, true}, {1, false}, // bucket 1
		{512, true}, {300, false}, // the largest bucket
		{513, false}, {8192, false}, // too large for a graph: run eagerly, never captured
		{2, true}, {2, false},
	} {
		want := base
		if tc.fresh {
			want += capture
		}
		wantStep(t, sc, base, tc.tokens, t0.Add(time.Duration(i)*time.Second), want, stepPhase{})
	}
	if n := sc.phases.captures.Load(); n != 5 {
		t.Errorf("%d shapes captured, want 5", n)
	}
}

func TestThrottleAfter(t *testing.T) {
	sc := newStartupCost(&Config{ThrottleAfter: time.Second, ThrottleFactor: 1.5, ColdSteps: 1, ColdFactor: 2, GraphCapture: 10 * time.Millisecond})
	t0, base := time.Unix(1000, 0), 10*time.Millisecond
	// The first step is cold (×2) and captures bucket 1 (+10 ms, unscaled); throttling
	// counts from its start and begins with the first step starting a second later.
	wantStep(t, sc, base, 1, t0, 30*time.Millisecond, stepPhase{coldEnd: true})
	wantStep(t, sc, base, 1, t0.Add(999*time.Millisecond), base, stepPhase{})
	wantStep(t, sc, base, 1, t0.Add(time.Second), 15*time.Millisecond, stepPhase{throttleStart: true})
	wantStep(t, sc, base, 1, t0.Add(time.Hour), 15*time.Millisecond, stepPhase{})
	wantStep(t, sc, base, 2, t0.Add(2*time.Hour), 25*time.Millisecond, stepPhase{}) // a new shape, while throttled
}

// TestStartupThroughScheduler drives the scheduler as the engine does: the first steps of a
// decode batch cost the fading factor over the roofline, then exactly the roofline.
func TestStartupThroughScheduler(t *testing.T) {
	c := DefaultConfig()
	c.ColdSteps, c.ColdFactor, c.GraphCapture = 4, 3, 40*time.Millisecond
	m := mustModel(t, c)
	s, sc := newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens), newStartupCost(&c)
	for i := range 3 {
		s.add(newSeq(formatInt(i), 100, 10, 1, 0, time.Now()))
	}
	start := time.Unix(1000, 0)
	for i := range 10 {
		roof := s.step()
		got, ph := sc.next(roof, s.stepTokens, start)
		want := roof
		if i < 4 { // fading from 3 × by (3−1)/4 a step: 3, 2.5, 2, 1.5
			want = time.Duration((3 - 0.5*float64(i)) * float64(roof))
		}
		if i <= 1 { // the 300-token prefill (bucket 512), then the first 3-sequence decode (bucket 4)
			want += c.GraphCapture
		}
		if got != want || ph.coldEnd != (i == 3) {
			t.Errorf("step %d (%d tokens): %v (roofline %v), coldEnd %v; want %v", i+1, s.stepTokens, got, roof, ph.coldEnd, want)
		}
		start = start.Add(got)
	}
}

func TestStartupOffByDefaultAndInFixedMode(t *testing.T) {
	c := DefaultConfig()
	if sc := newStartupCost(&c); sc != nil {
		t.Errorf("DefaultConfig has a start-up cost: %+v", sc)
	}
	c = fixedConfig(time.Millisecond, time.Millisecond)
	c.ColdStart, c.ThrottleAfter, c.ThrottleFactor = true, time.Second, 2
	s, _ := startSim(t, c)
	if s.eng.cost != nil || !reflect.DeepEqual(s.Phases(), Phases{}) {
		t.Errorf("fixed mode with --cold-start: cost %+v, phases %+v; want none", s.eng.cost, s.Phases())
	}
	if d := s.Describe(); d["cold_steps"] != "" || d["throttle_after"] != "" {
		t.Errorf("fixed mode describes start-up costs: %v", d)
	}
}

func TestColdStartFlags(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	BindFlags(fs, &c)
	if err := fs.Parse([]string{"--cold-start", "--cold-steps", "10", "--throttle-after", "20s", "--throttle-factor", "1.3"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if steps, factor, capture := c.coldStart(); steps != 10 || factor != presetColdFactor || capture != presetGraphCapture {
		t.Errorf("--cold-start --cold-steps 10: %d × %g, %v per shape", steps, factor, capture)
	}
	sc := newStartupCost(&c)
	if sc == nil || sc.throttleAfter != 20*time.Second || sc.throttleFactor != 1.3 {
		t.Errorf("startup cost %+v", sc)
	}
	for flagName, mutate := range map[string]func(*Config){
		"--cold-steps":      func(c *Config) { c.ColdSteps = 5 },
		"--cold-factor":     func(c *Config) { c.ColdSteps, c.ColdFactor = 5, 0.5 },
		"--throttle-after":  func(c *Config) { c.ThrottleFactor = 1.3 },
		"--throttle-factor": func(c *Config) { c.ThrottleAfter, c.ThrottleFactor = time.Second, -1 },
		"--graph-capture":   func(c *Config) { c.GraphCapture = -time.Millisecond },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flagName) {
			t.Errorf("%s: Validate() = %v, want an error naming the flag", flagName, err)
		}
	}
}

// TestColdEndTruth runs the engine in real time and checks that the truth log, Phases and
// /version agree on when the cold phase ended and throttling began, and that the stream's
// token ending the last cold step was written after it (an ordering of the simulator's own
// clocks, not a timing).
func TestColdEndTruth(t *testing.T) {
	c := DefaultConfig()
	c.ColdSteps, c.ColdFactor, c.GraphCapture = 4, 2, time.Millisecond
	c.ThrottleAfter, c.ThrottleFactor = time.Nanosecond, 1.1 // from the second step on
	c.TruthFile = filepath.Join(t.TempDir(), "truth.jsonl")
	s, base := startSim(t, c)
	resp := post(t, base+"/v1/completions", completion("x", 8), "X-Request-Id", "cold-1")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var version struct {
		Phases map[string]int64 `json:"phases"`
	}
	getJSON(t, base+"/version", &version)
	ph := s.Phases()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if ph.ColdSteps != 4 || ph.Steps < 8 || ph.Captures < 1 || ph.ColdEnd.IsZero() || !ph.ThrottleStart.Before(ph.ColdEnd) {
		t.Fatalf("phases %+v", ph)
	}
	if version.Phases["cold_end_ns"] != ph.ColdEnd.UnixNano() || version.Phases["throttle_start_ns"] != ph.ThrottleStart.UnixNano() {
		t.Errorf("/version phases %v, Phases %+v", version.Phases, ph)
	}
	f, err := os.Open(c.TruthFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string]struct{ at, steps int64 }{}
	tokens, fourth := 0, int64(0) // when the event carrying the 4th token was written
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var ev struct {
			Kind      string `json:"kind"`
			WrittenNs int64  `json:"written_ns"`
			Steps     int64  `json:"steps"`
			Tokens    int    `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch ev.Kind {
		case "cold_end", "throttle_start":
			lines[ev.Kind] = struct{ at, steps int64 }{ev.WrittenNs, ev.Steps}
		case "content":
			if tokens += ev.Tokens; tokens >= 4 && fourth == 0 {
				fourth = ev.WrittenNs
			}
		}
	}
	if l := lines["cold_end"]; l.steps != 4 || l.at != ph.ColdEnd.UnixNano() {
		t.Errorf("truth cold_end %+v, Phases %+v", l, ph)
	}
	if l := lines["throttle_start"]; l.steps != 2 || l.at != ph.ThrottleStart.UnixNano() {
		t.Errorf("truth throttle_start %+v, Phases %+v", l, ph)
	}
	if fourth < ph.ColdEnd.UnixNano() {
		t.Errorf("the 4th token was written at %d, before the cold phase ended at %d", fourth, ph.ColdEnd.UnixNano())
	}
}
