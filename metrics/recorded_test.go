package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"servebench/compare/recorded"
	"servebench/record"
)

// The recorded sets: runs of scripts/validate-steady's shapes over HTTP against `servebench
// sim`, trimmed to the fields the check reads (go run ./internal/steadyrec), judged here with
// the current policy. The manifest says how each set was recorded, on how loaded a machine,
// and whether it was a design set (looked at while changing a rule) or held out (recorded
// after the policy version it names froze). The table this test prints is the one in
// docs/steady-evidence.md; -update-evidence rewrites it there.

var updateEvidence = flag.Bool("update-evidence", false, "rewrite the recorded sets' table in docs/steady-evidence.md")

const evidencePath = "../docs/steady-evidence.md"

// recordedSet is one set of the manifest.
type recordedSet struct {
	Name     string `json:"name"`
	Use      string `json:"use"` // "design" or "held-out"
	Policy   string `json:"policy"`
	Command  string `json:"command"`
	Load     string `json:"load_average"`
	Recorded string `json:"recorded"`
	// Quiet: the machine's load stayed below its cores while recording. The published
	// bounds are asserted on quiet sets only: on a busy machine the simulator shares the
	// CPU with everything else and is not steady by construction, and the client's own
	// disturbance leaves windows out; a busy set's counts are pinned by the page's table.
	Quiet bool `json:"quiet"`
}

// shapeClass is what a shape is by construction, from its file's name: steady, or the change
// the check must catch ("drift": a drift of TTFT, ITL or throughput, or an initial
// transient; "overload": unbounded queueing). "phase" is steady too, its users' phase merging
// mid-run, and counted apart as scripts/validate-steady counts it.
func shapeClass(name string) (shape, class string) {
	for _, s := range []struct{ prefix, class string }{
		{"closed-lognormal", "steady"}, {"poisson-50", "steady"}, {"gamma-0.25-40", "steady"},
		{"fixed-jitter", "steady"}, {"mix-70_30", "steady"}, {"closed-16-phase", "phase"},
		{"throttle", "drift"}, {"cold-start", "drift"}, {"overload-130_-20s", "overload"}, {"overload-130_-40s", "overload"},
	} {
		if strings.HasPrefix(name, s.prefix) {
			return s.prefix, s.class
		}
	}
	return "", ""
}

// judged is one run's verdict, in the words the rates count.
type judged struct {
	set, shape, class, file string
	notSteady, caught       bool
	verdict                 string // "steady", "not tested", or the findings
}

// recordedRun is one recorded run, read.
type recordedRun struct {
	set, file string
	h         *record.Header
	recs      []record.Record
}

// readRecorded reads every run of the sets (stored files of package compare/recorded), the
// files in parallel.
func readRecorded(t *testing.T, sets []recordedSet) []recordedRun {
	var out []recordedRun
	for _, set := range sets {
		files, _ := filepath.Glob(filepath.Join("testdata", "recorded", set.Name, "*"+recorded.Ext))
		for _, f := range files {
			out = append(out, recordedRun{set: set.Name, file: filepath.Base(f)})
		}
	}
	errs := make([]error, len(out))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range out {
		g.Go(func() error {
			r := &out[i]
			r.h, r.recs, errs[i] = recorded.ReadFile(filepath.Join("testdata", "recorded", r.set), r.file)
			return nil
		})
	}
	_ = g.Wait() // each file's error is in errs

	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

// judgeRecorded judges every recorded run, leaving out skip (a rule of SteadyPolicy or one of
// its constants, neutralised; "" for none), the runs in parallel.
func judgeRecorded(t *testing.T, runs []recordedRun, skip string) []judged {
	out := make([]judged, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, r := range runs {
		shape, class := shapeClass(r.file)
		if class == "" {
			t.Fatalf("%s/%s: no shape of that name", r.set, r.file)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st := steadiness(r, skip, false)
			if skip == "" { // the check alone must be what Summary gives
				a, err1 := json.Marshal(st)
				b, err2 := json.Marshal(steadiness(r, skip, true))
				if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
					t.Errorf("%s/%s: the steady check alone gives %s (%v), Summary %s (%v)", r.set, r.file, a, err1, b, err2)
				}
			}
			j := judged{set: r.set, shape: shape, class: class, file: r.file, verdict: verdictWords(st)}
			j.notSteady = st.Tested && !st.Steady
			switch class {
			case "drift":
				j.caught = st.Transient != nil
				for _, d := range st.Drifts {
					j.caught = j.caught || d.Metric == "ttft" || d.Metric == "itl" || d.Metric == "output_throughput"
				}
			case "overload":
				j.caught = st.Queueing
			}
			out[i] = j
		}()
	}
	wg.Wait()
	return out
}

// steadiness is run r's steady check with skip left out: Summary's (whole, with summary) or
// computed as Summary computes it (summary.go) without the rest of the summary, which takes
// most of the time (the distributions' sorts): the ablation judges every run twelve times.
// judgeRecorded checks the two agree on the full policy.
func steadiness(r recordedRun, skip string, summary bool) *Steadiness {
	a := NewAccumulator(Options{})
	a.SetHeader(r.h)
	a.steady.skip = skip
	for k := range r.recs {
		a.Add(&r.recs[k])
	}
	if summary {
		return a.Summary().Steadiness
	}
	return a.stagedSteadiness(a.steady.check(a.closedUsers(), a.openLoop(), a.health(), a.capped()))
}

// verdictWords is a verdict as its findings: what a change of rules may change.
func verdictWords(st *Steadiness) string {
	switch {
	case !st.Tested:
		return "not tested"
	case st.Steady:
		return "steady"
	}
	var w []string
	if st.Queueing {
		w = append(w, "queueing")
	}
	if st.Transient != nil {
		w = append(w, "transient")
	}
	for _, d := range st.Drifts {
		w = append(w, d.Metric+" "+d.Direction)
	}
	return strings.Join(w, ", ")
}

// rates are a set's counts: steady runs and their false alarms, changing runs and catches.
type rates struct{ steady, alarms, changing, caught int }

func countRates(js []judged, set string) rates {
	var r rates
	for _, j := range js {
		if set != "" && j.set != set {
			continue
		}
		switch j.class {
		case "phase":
		case "steady":
			r.steady++
			if j.notSteady {
				r.alarms++
			}
		default:
			r.changing++
			if j.caught {
				r.caught++
			}
		}
	}
	return r
}

func readManifest(t *testing.T) []recordedSet {
	b, err := os.ReadFile(filepath.Join("testdata", "recorded", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sets []recordedSet
	if err := json.Unmarshal(b, &sets); err != nil {
		t.Fatal(err)
	}
	return sets
}

// ablated are the rules the ablation leaves out one at a time: every rule that can change a
// verdict but the trend test itself.
var ablated = []string{SteadyTransient, SteadyClient, SteadyQueueing, SteadyCycled, SteadyWorkload, SteadyContention, SteadyClientQueue}

// neutralised are the constants of SteadyPolicy the constant ablation neutralises one at a
// time (steadyAcc.off), each with how: its gate or cap is not applied. The other constants
// have no neutral value (a window count, a level, the least requests); they set what is
// tested, not a gate on it.
var neutralised = []struct{ name, as string }{
	{"transient_min_ratio", "no ratio gate, of the median or the batches"},
	{"transient_margin", "no margin over the slowest later block"},
	{"shift_min_separation", "the step test without its rank gate"},
	{"disturb_sched_ms", "the signal off"},
	{"disturb_steal", "the signal off"},
	{"disturb_late_ms", "the signal off (the timer and the sends)"},
	{"disturb_share", "any disturbed time leaves a window out"},
	{"cycled_share", "0: E2E need only move the same way"},
	{"explain_share", "no share needed: the refitted trend test alone"},
	{"trim_mads", "one fit, no request trimmed"},
}

// TestRecordedSteadyRates judges the recorded sets with the current policy and holds it to
// the published rates on a quiet set: at least 90% of the throttled, cold and overloaded
// runs caught (overload named as unbounded queueing), at most 3% of the steady runs called
// not steady. The design sets' and the held-out sets' rates are counted apart (a held-out
// set, recorded after its policy froze, is the policy's measure; the bounds are asserted on
// either only where the set is quiet). It also leaves each rule out in turn and counts the
// verdicts that changes, for each use apart, and neutralises each constant with a gate in turn
// and counts the verdicts that changes on each set. Every count, and every run whose verdict a rule changes, is in the
// table of docs/steady-evidence.md, which must be what this test prints: a change of any
// recorded run's verdict fails it until the page is regenerated.
func TestRecordedSteadyRates(t *testing.T) {
	if raceEnabled {
		t.Skip("judged without the race detector (scripts/test): one goroutine, the time many times over under it")
	}
	start := time.Now()
	sets := readManifest(t)
	runs := readRecorded(t, sets)
	all := judgeRecorded(t, runs, "")
	if len(all) == 0 {
		t.Fatal("no recorded runs")
	}
	var b strings.Builder
	b.WriteString("| set | use | shape | runs | called not steady | caught |\n|---|---|---|--:|--:|--:|\n")
	type key struct{ set, shape string }
	rows := map[key][3]int{}
	var order []key
	for _, j := range all {
		k := key{j.set, j.shape}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		r := rows[k]
		r[0]++
		if j.notSteady {
			r[1]++
		}
		if j.caught {
			r[2]++
		}
		rows[k] = r
	}
	use := map[string]string{}
	for _, s := range sets {
		use[s.Name] = s.Use
	}
	for _, k := range order {
		r := rows[k]
		_, class := shapeClass(k.shape)
		caught := "—"
		if class != "steady" && class != "phase" {
			caught = fmt.Sprint(r[2])
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s |\n", k.set, use[k.set], k.shape, r[0], r[1], caught)
	}
	b.WriteString("\n| set | use | steady runs | false alarms | changing runs | caught |\n|---|---|--:|--:|--:|--:|\n")
	for _, s := range sets {
		r := countRates(all, s.Name)
		fmt.Fprintf(&b, "| %s | %s | %d | %d (%.1f%%) | %d | %d (%.0f%%) |\n", s.Name, s.Use, r.steady, r.alarms, pct(r.alarms, r.steady), r.changing, r.caught, pct(r.caught, r.changing))
		if s.Quiet && r.steady > 0 && pct(r.alarms, r.steady) > 3 {
			t.Errorf("set %s: %d of %d steady runs called not steady, more than 3%%", s.Name, r.alarms, r.steady)
		}
		if s.Quiet && r.changing > 0 && pct(r.caught, r.changing) < 90 {
			t.Errorf("set %s: %d of %d changing runs caught, fewer than 90%%", s.Name, r.caught, r.changing)
		}
	}
	// design and held-out sets apart: a held-out set's rates are the policy's measure, a
	// design set's what it was set on
	uses := usesOf(sets)
	for _, u := range uses {
		r := countUse(all, use, u)
		fmt.Fprintf(&b, "| all %s | | %d | %d (%.1f%%) | %d | %d (%.0f%%) |\n", u, r.steady, r.alarms, pct(r.alarms, r.steady), r.changing, r.caught, pct(r.caught, r.changing))
	}
	if testing.Short() {
		t.Logf("judged %d recorded runs once (-short: no ablation, the page not checked)\n%s", len(all), b.String())
		return
	}

	// the ablation: each rule left out in turn
	b.WriteString("\n| rule left out | verdicts changed |")
	for _, u := range uses {
		fmt.Fprintf(&b, " false alarms (%s) | caught (%s) |", u, u)
	}
	b.WriteString(" changed runs |\n|---|--:|" + strings.Repeat("--:|--:|", len(uses)) + "---|\n")
	rateCells := func(js []judged) string {
		var c strings.Builder
		for _, u := range uses {
			r := countUse(js, use, u)
			fmt.Fprintf(&c, " %d of %d | %d of %d |", r.alarms, r.steady, r.caught, r.changing)
		}
		return c.String()
	}
	fmt.Fprintf(&b, "| (none) | 0 |%s |\n", rateCells(all))
	for _, rule := range ablated {
		js := judgeRecorded(t, runs, rule)
		var changed []string
		for i := range js {
			if js[i].verdict != all[i].verdict {
				name := strings.TrimSuffix(js[i].file, recorded.Ext)
				if len(sets) > 1 {
					name = js[i].set + "/" + name
				}
				changed = append(changed, fmt.Sprintf("%s: %s → %s", name, all[i].verdict, js[i].verdict))
			}
		}
		sort.Strings(changed)
		fmt.Fprintf(&b, "| `%s` | %d |%s %s |\n", rule, len(changed), rateCells(js), strings.Join(changed, "; "))
	}

	// the constant ablation: each neutralisable constant neutralised in turn
	b.WriteString("\n| constant neutralised | value | as |")
	for _, s := range sets {
		fmt.Fprintf(&b, " verdicts changed (%s) |", s.Name)
	}
	b.WriteString(" changed runs |\n|---|--:|---|" + strings.Repeat("--:|", len(sets)) + "---|\n")
	for _, c := range neutralised {
		k, ok := steadyConstant(c.name)
		if !ok {
			t.Errorf("constant ablation: %s is not a constant of SteadyPolicy", c.name)
			continue
		}
		js := judgeRecorded(t, runs, c.name)
		per := map[string]int{}
		var changed []string
		for i := range js {
			if js[i].verdict != all[i].verdict {
				per[js[i].set]++
				changed = append(changed, fmt.Sprintf("%s/%s: %s → %s", js[i].set, strings.TrimSuffix(js[i].file, recorded.Ext), all[i].verdict, js[i].verdict))
			}
		}
		sort.Strings(changed)
		fmt.Fprintf(&b, "| `%s` | %g %s | %s |", c.name, k.Value, k.Unit, c.as)
		for _, s := range sets {
			fmt.Fprintf(&b, " %d |", per[s.Name])
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(changed, "; "))
	}
	table := b.String()
	t.Logf("judged %d recorded runs %d times in %v\n%s", len(all), len(ablated)+len(neutralised)+1, time.Since(start).Round(time.Millisecond), table)
	checkEvidence(t, table)
}

// steadyConstant is SteadyPolicy's constant of that name.
func steadyConstant(name string) (Constant, bool) {
	for _, r := range SteadyPolicy.Rules {
		for _, c := range r.Constants {
			if c.Name == name {
				return c, true
			}
		}
	}
	return Constant{}, false
}

// usesOf is the sets' uses, design first.
func usesOf(sets []recordedSet) []string {
	var out []string
	for _, u := range []string{"design", "held-out"} {
		for _, s := range sets {
			if s.Use == u {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

// countUse is countRates over the sets of one use.
func countUse(js []judged, use map[string]string, u string) rates {
	var r rates
	for _, s := range slices.Sorted(maps.Keys(use)) {
		if use[s] == u {
			x := countRates(js, s)
			r.steady, r.alarms, r.changing, r.caught = r.steady+x.steady, r.alarms+x.alarms, r.changing+x.changing, r.caught+x.caught
		}
	}
	return r
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// checkEvidence compares the table with the one between the markers of
// docs/steady-evidence.md, rewriting it with -update-evidence.
func checkEvidence(t *testing.T, table string) {
	doc, err := os.ReadFile(evidencePath)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- recorded:begin -->\n", "<!-- recorded:end -->"
	s := string(doc)
	i, k := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || k < i {
		t.Fatalf("%s lacks the recorded markers", evidencePath)
	}
	body := "<!-- Generated by `go test ./metrics -run TestRecordedSteadyRates -update-evidence`. -->\n\n" + table + "\n"
	if s[i+len(begin):k] == body {
		return
	}
	if !*updateEvidence {
		t.Errorf("%s is stale: go test ./metrics -run TestRecordedSteadyRates -update-evidence", evidencePath)
		return
	}
	if err := os.WriteFile(evidencePath, []byte(s[:i+len(begin)]+body+s[k:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
