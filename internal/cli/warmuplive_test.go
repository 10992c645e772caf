package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
	"servebench/stat"
)

// TestWarmupAutoLive is a measuring harness, not a check: with SERVEBENCH_WARMUP_LIVE set to
// a folder it runs --warmup auto against the cold-start cases of
// TestWarmupAutoAgainstColdStart, --cold-start at 8 users and 128/32 (whose batch shapes are
// first met after a short warmup), and a steady simulator, and keeps each run's records,
// summary and the simulator's cold end there, so that live runs beside busy loops can be
// compared (docs/metrics.md "Warmup").
// SERVEBENCH_WARMUP_CASES picks cases by name (custom, preset, cold8, steady).
func TestWarmupAutoLive(t *testing.T) {
	dir := os.Getenv("SERVEBENCH_WARMUP_LIVE")
	if dir == "" {
		t.Skip("SERVEBENCH_WARMUP_LIVE not set")
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	cases := []struct {
		name             string
		mod              func(*sim.Config)
		users, in, outTk string
	}{
		{"custom", func(c *sim.Config) { c.ColdSteps, c.ColdFactor, c.GraphCapture = 300, 4, 20*time.Millisecond }, "4", "64", "16"},
		{"preset", func(c *sim.Config) { c.ColdStart = true }, "4", "64", "16"},
		{"cold8", func(c *sim.Config) { c.ColdStart = true }, "8", "128", "32"},
		{"steady", func(c *sim.Config) {}, "4", "64", "16"},
	}
	only := os.Getenv("SERVEBENCH_WARMUP_CASES") // e.g. "custom,preset,steady"; empty: all
	for _, k := range cases {
		if only != "" && !slices.Contains(strings.Split(only, ","), k.name) {
			continue
		}
		srv, url := startSimServer(t, k.mod)
		out := filepath.Join(dir, run+"-"+k.name+".jsonl")
		code, stdout, errs := runMain(t, "run", "--url", url, "--warmup", "auto", "--requests", "60", "--concurrency", k.users,
			"--input-tokens", k.in, "--output-tokens", k.outTk, "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", k.name, code, errs)
		}
		h, _ := readRecords(t, out)
		ph := srv.Phases()
		var coldEnd int64
		if !ph.ColdEnd.IsZero() {
			coldEnd = int64(ph.ColdEnd.Sub(h.Start))
		}
		load, _ := os.ReadFile("/proc/loadavg")
		meta, _ := json.Marshal(map[string]any{"case": k.name, "cold_end_ns": coldEnd, "captures": ph.Captures,
			"stdout": stdout, "loadavg": string(load)})
		if err := os.WriteFile(out+".meta.json", meta, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWarmupAutoLiveReport reads the folder TestWarmupAutoLive filled (given as
// SERVEBENCH_WARMUP_REPORT) and logs, per run: when measuring began against the cold phase's
// end and the guard's bound, the warmup's request count, whether the run named late
// requests (Summary.LateWarmup), the steady verdict, and the measured ITL gaps more than
// 25 ms over the median in the window's first 0.5 s (the slow events that --cold-start at 8
// users showed after --warmup auto).
func TestWarmupAutoLiveReport(t *testing.T) {
	dir := os.Getenv("SERVEBENCH_WARMUP_REPORT")
	if dir == "" {
		t.Skip("SERVEBENCH_WARMUP_REPORT not set")
	}
	metas, _ := filepath.Glob(filepath.Join(dir, "*.meta.json"))
	slices.Sort(metas)
	for _, m := range metas {
		var meta struct {
			Case      string `json:"case"`
			ColdEndNs int64  `json:"cold_end_ns"`
			Loadavg   string `json:"loadavg"`
		}
		b, err := os.ReadFile(m)
		if err != nil || json.Unmarshal(b, &meta) != nil {
			t.Fatalf("%s: %v", m, err)
		}
		h, recs := readRecords(t, strings.TrimSuffix(m, ".meta.json"))
		a := metrics.NewAccumulator(metrics.Options{})
		a.SetHeader(h)
		var first int64
		var gaps []float64
		for i := range recs {
			r := &recs[i]
			a.Add(r)
			if r.Phase == record.PhaseMeasure && (first == 0 || r.Sent < first) {
				first = r.Sent
			}
		}
		var early []float64
		for _, r := range recs {
			if r.Phase != record.PhaseMeasure {
				continue
			}
			for k := 1; k < len(r.Events); k++ {
				g := float64(r.Events[k].T - r.Events[k-1].T)
				gaps = append(gaps, g)
				if r.Events[k].T < first+int64(500*time.Millisecond) {
					early = append(early, g)
				}
			}
		}
		med := stat.Median(gaps)
		slow := 0
		for _, g := range early {
			if g > med+25e6 {
				slow++
			}
		}
		s := a.Summary()
		late := time.Duration(first - meta.ColdEndNs)
		bound := max(time.Duration(meta.ColdEndNs)/10, time.Second)
		verdict := "early"
		switch {
		case meta.ColdEndNs == 0:
			verdict = "no cold phase"
		case late >= -bound:
			verdict = "ok"
		}
		named := "-"
		if l := s.LateWarmup; l != nil {
			named = fmt.Sprintf("named %d late (%.0f%% slower, p %.2g, %.2f s)", l.Requests, 100*(l.Ratio-1), l.P, l.Seconds)
		}
		st := "untested"
		if ss := s.Steadiness; ss != nil && ss.Tested {
			st = map[bool]string{true: "steady", false: "NOT steady"}[ss.Steady]
			if ss.Transient != nil {
				st += " (transient)"
			}
		}
		// measuring begun early, made from the same run: the 60 requests (the guard's count)
		// sent from X before the cold phase's end relabelled measured
		shifted := ""
		for _, x := range []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, -time.Second, -3 * time.Second, -6 * time.Second} {
			from := meta.ColdEndNs - int64(x)
			if meta.ColdEndNs == 0 && x < 0 {
				from = -int64(x) // a steady server: windows from 1, 3 and 6 s in
			}
			if from <= 0 || (meta.ColdEndNs == 0 && x > 0) {
				continue
			}
			var rs []record.Record
			for _, r := range recs {
				if r.Sent >= from && len(rs) < 60 && (r.Phase == record.PhaseWarmup || x < 0 && r.Phase == record.PhaseMeasure) {
					r.Phase = record.PhaseMeasure
					rs = append(rs, r)
				}
			}
			b := metrics.NewAccumulator(metrics.Options{})
			b.SetHeader(h)
			for i := range rs {
				b.Add(&rs[i])
			}
			if l := b.Summary().LateWarmup; l != nil {
				shifted += fmt.Sprintf(" %+.1fs: %d (%.0f%%)", -x.Seconds(), l.Requests, 100*(l.Ratio-1))
			} else {
				shifted += fmt.Sprintf(" %+.1fs: unnamed", -x.Seconds())
			}
		}
		// this build's judge replayed over the run's records (warmup and measured alike: the
		// server is the same either way), so that a judge can be weighed on runs recorded by
		// another: where it would have stopped warming, against the cold phase's end
		replay := "never"
		if at, wins, ok := replayJudge(h, recs); ok {
			if meta.ColdEndNs > 0 {
				replay = fmt.Sprintf("%+.2fs (%d windows)", float64(at-meta.ColdEndNs)/1e9, wins)
			} else {
				replay = fmt.Sprintf("at %.2fs (%d windows)", float64(at)/1e9, wins)
			}
		}
		t.Logf("%s %-6s cold %.2fs late %+.2fs (bound %.1fs) %-5s warmup %d (%s) | %s | %s | slow gaps %d | load %s | judge replayed: stop %s | early from the records:%s",
			filepath.Base(m)[:12], meta.Case, float64(meta.ColdEndNs)/1e9, late.Seconds(), bound.Seconds(), verdict,
			h.Ends[0].WarmupRequests, h.Ends[0].WarmupStop, named, st, slow, strings.Fields(meta.Loadavg + " ?")[0], replay, shifted)
	}
}

// replayJudge feeds stat.WarmupJudge a run's records in time order, as the load runner
// streams them (a send, each content event, a completion), with the run's --concurrency as
// its minimum, and says when (ns since t0) it would have said warm and after how many
// windows. Every record is fed, the measured ones too, so a judge that stops later than the
// recorded one is still seen.
func replayJudge(h *record.Header, recs []record.Record) (int64, int, bool) {
	users := 1
	if i := slices.Index(h.Command, "--concurrency"); i >= 0 && i+1 < len(h.Command) {
		users, _ = strconv.Atoi(h.Command[i+1])
	}
	type step struct {
		t    int64
		kind int // 0 sent, 1 event, 2 done
		r    *record.Record
	}
	var steps []step
	for i := range recs {
		r := &recs[i]
		sent := r.Sent
		if sent == 0 {
			sent = r.Scheduled
		}
		steps = append(steps, step{sent, 0, r})
		done := max(r.Done, sent)
		if r.OK() {
			for _, e := range r.Events {
				steps = append(steps, step{e.T, 1, r})
				done = max(done, e.T)
			}
		}
		steps = append(steps, step{done, 2, r})
	}
	slices.SortStableFunc(steps, func(a, b step) int {
		if a.t != b.t {
			return cmp.Compare(a.t, b.t)
		}
		return cmp.Compare(a.kind, b.kind)
	})
	j := stat.WarmupJudge{Tolerance: 0.1, Min: users}
	for _, s := range steps {
		var warm bool
		switch s.kind {
		case 0:
			j.Sent(s.r.ID, s.t)
		case 1:
			warm = j.Event(s.r.ID, s.t)
		case 2:
			var ev []int64
			if s.r.OK() {
				for _, e := range s.r.Events {
					ev = append(ev, e.T)
				}
			}
			sent := s.r.Sent
			if sent == 0 {
				sent = s.r.Scheduled
			}
			warm = j.Done(s.r.ID, sent, ev)
		}
		if warm {
			return s.t, j.Windows(), true
		}
	}
	return 0, j.Windows(), false
}
