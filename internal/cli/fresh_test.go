package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
)

// cachedShare is one run's prompt tokens and those the server said it served from its prefix
// cache (llama.cpp timings.cache_n, OpenAI usage cached_tokens), over its measured requests.
type cachedShare struct{ cached, prompt float64 }

func (c cachedShare) share() float64 {
	if c.prompt == 0 {
		return 0
	}
	return c.cached / c.prompt
}

// measuredCache sums cachedShare per run of a records file's measured requests.
func measuredCache(t *testing.T, recs []record.Record) map[int]cachedShare {
	t.Helper()
	out := map[int]cachedShare{}
	for _, r := range recs {
		if r.Phase != record.PhaseMeasure || !r.OK() {
			continue
		}
		c := out[r.Run]
		c.prompt += float64(r.PromptTokens)
		for _, k := range []string{"timings.cache_n", "usage.cached_tokens"} {
			if v, ok := r.Server[k]; ok {
				c.cached += v
				break
			}
		}
		out[r.Run] = c
	}
	return out
}

// freshRuns runs --warmup auto, --repeat 3 and a 3-point sweep against url, and a shared-prefix
// and a session run, and returns each file's measured cache shares per run, by name.
func freshRuns(t *testing.T, url string, common ...string) map[string]map[int]cachedShare {
	t.Helper()
	dir := t.TempDir()
	out := map[string]map[int]cachedShare{}
	for i, c := range []struct {
		name string
		args []string
	}{
		{"warmup-auto", []string{"run", "--warmup", "auto", "--warmup-max", "24", "--requests", "16", "--concurrency", "4"}},
		{"repeat-3", []string{"run", "--repeat", "3", "--requests", "8", "--concurrency", "4"}},
		{"sweep-3", []string{"sweep", "--concurrency", "1,2,4", "--requests", "8"}},
		{"shared-prefix", []string{"run", "--prefix-groups", "2", "--prefix-tokens", "96", "--requests", "8", "--concurrency", "4"}},
		{"sessions", []string{"run", "--turns", "3", "--requests", "6", "--concurrency", "2", "--input-tokens", "64"}},
	} {
		path := filepath.Join(dir, c.name+".jsonl")
		// each invocation its own seed: a second invocation with the same seed sends the same
		// prompts, by design (that reuse is the user's to avoid, and the cache note says how)
		seed := fmt.Sprint(201 + 1000*i)
		args := append(append(append(slices.Clone(c.args), "-q", "--url", url, "--seed", seed, "-o", path), common...), "--input-tokens", "128")
		if c.name == "sessions" {
			args = args[:len(args)-2] // its own --input-tokens: 64 new tokens a turn
		}
		code, _, errs := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errs)
		}
		_, recs := readRecords(t, path)
		out[c.name] = measuredCache(t, recs)
	}
	return out
}

// checkFresh holds the figures to the rule: no measured run takes more than 5% of its prompt
// tokens from the cache, unless the workload was built to reuse them; a shared-prefix run and
// a session run still show their reuse.
func checkFresh(t *testing.T, got map[string]map[int]cachedShare) {
	t.Helper()
	runs := map[string]int{"warmup-auto": 1, "repeat-3": 3, "sweep-3": 3, "shared-prefix": 1, "sessions": 1}
	for name, want := range runs {
		byRun := got[name]
		if len(byRun) != want {
			t.Errorf("%s: %d measured runs, want %d", name, len(byRun), want)
		}
		for run, c := range byRun {
			t.Logf("%-13s run %d: %5.1f%% of %6.0f prompt tokens from the cache", name, run, 100*c.share(), c.prompt)
			switch name {
			case "shared-prefix", "sessions":
				if c.share() < 0.3 {
					t.Errorf("%s run %d: %.1f%% cached: the reuse the workload is built for is gone", name, run, 100*c.share())
				}
			default:
				if c.share() > 0.05 {
					t.Errorf("%s run %d: %.1f%% of prompt tokens came from the cache: the tool measured its own earlier requests", name, run, 100*c.share())
				}
			}
		}
	}
}

// TestFreshPromptsSimulator: against the simulator's engine model and its prefix cache, no
// measured run of --warmup auto, --repeat 3 or a sweep is served from the cache its warmup or
// an earlier run filled, while shared prefixes and session history are reused.
func TestFreshPromptsSimulator(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 })
	checkFresh(t, freshRuns(t, url, "--output-tokens", "4"))
}

// TestFreshPromptsLlamaCpp is the same against the real llama.cpp peer (mini.gguf, 4 slots):
// llama.cpp reuses a slot's cached prompt prefix (timings.cache_n) whenever a prompt repeats.
// It runs beside other tests (it judges cache shares, not times); the shared server's other
// users wait for it, or it for them (peertest.Shared).
func TestFreshPromptsLlamaCpp(t *testing.T) {
	t.Parallel()
	url := llamaMini4(t)
	checkFresh(t, freshRuns(t, url, "--output-tokens", "4"))
}

// TestSessionsCountedWhole: for a multi-turn workload --requests and --warmup count sessions;
// every measured session runs all its turns, the warmup runs whole sessions of its own, and
// every record names its session (session ids count from 1: a session 0 lost its id to
// omitempty).
func TestSessionsCountedWhole(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 })
	out := filepath.Join(t.TempDir(), "s.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--turns", "3", "--requests", "5", "--warmup", "2", "--concurrency", "2",
		"--input-tokens", "16", "--output-tokens", "4", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, recs := readRecords(t, out)
	turns := map[string]map[int][]int{record.PhaseWarmup: {}, record.PhaseMeasure: {}}
	for _, r := range recs {
		turns[r.Phase][r.Session] = append(turns[r.Phase][r.Session], r.Turn)
	}
	for phase, want := range map[string]int{record.PhaseWarmup: 2, record.PhaseMeasure: 5} {
		if len(turns[phase]) != want {
			t.Errorf("%s: %d sessions, want %d (%v)", phase, len(turns[phase]), want, turns[phase])
		}
		for id, ts := range turns[phase] {
			slices.Sort(ts)
			if !slices.Equal(ts, []int{1, 2, 3}) {
				t.Errorf("%s session %d: turns %v, want 1, 2, 3", phase, id, ts)
			}
			if _, both := turns[record.PhaseWarmup][id]; both && phase == record.PhaseMeasure {
				t.Errorf("session %d was both warmup and measured", id)
			}
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for n := 0; sc.Scan(); n++ {
		if l := sc.Text(); strings.Contains(l, `"phase"`) && !strings.Contains(l, `"session":`) {
			t.Errorf("line %d has no session: %.120s", n+1, l)
		}
	}
}

// TestLoadLineTraceAndRamp: a trace dataset is an open loop of N arrivals over a span at a
// mean rate, its lengths a distribution, in text, Markdown and HTML and in gobench's
// condition lines; a ramp is not "0 users (closed loop)".
func TestLoadLineTraceAndRamp(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 })
	dir := t.TempDir()
	trace := filepath.Join(dir, "mooncake.jsonl")
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [0, %d]}`+"\n", i*20, 40+i, 2+i%5, i+1)
	}
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mc := filepath.Join(dir, "mc.jsonl")
	code, stdout, errs := runMain(t, "run", "--url", url, "--dataset", "mooncake:"+trace, "--block-tokens", "32", "-o", mc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{"open loop: 20 arrivals of mooncake:mooncake.jsonl over 380ms (mean 52.6 req/s)", "out mean 4, p50 4, max 6 tokens"}
	for _, format := range []string{"text", "md", "html"} {
		got := stdout
		if format != "text" {
			var errs string
			code, got, errs = runMain(t, "report", "--format", format, mc)
			if code != 0 {
				t.Fatalf("report --format %s: exit %d: %s", format, code, errs)
			}
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", format, w, got)
			}
		}
		if strings.Contains(got, "closed loop") || strings.Contains(got, "out 128") {
			t.Errorf("%s: a trace called a closed loop or its lengths fixed:\n%s", format, got)
		}
	}
	code, got, errs := runMain(t, "report", "--format", "gobench", mc)
	if code != 0 {
		t.Fatalf("gobench: exit %d: %s", code, errs)
	}
	if !strings.Contains(got, "workload.output_tokens: mean 4.0, p50 4.0, max 6") || !strings.Contains(got, "/trace=mooncake:mooncake.jsonl") {
		t.Errorf("gobench conditions:\n%s", got)
	}

	// 16-token prompts: a ramp builds prompts for its peak rate (1,000 here), and the load line
	// is all this checks
	code, stdout, errs = runMain(t, "run", "--url", url, "--ramp", "linear:2..20", "--duration", "1s", "--input-tokens", "16",
		"--output-tokens", "2", "-o", filepath.Join(dir, "ramp.jsonl"))
	if code != 0 {
		t.Fatalf("ramp: exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "open loop: ramp linear:2..20") || strings.Contains(stdout, "users (closed loop)") {
		t.Errorf("ramp load line:\n%s", stdout)
	}
}

// TestRepeatPartsReplayed: each --repeat run sends prompts of its own; the header embeds every
// run's (and --save-workload saves them), and --like replays them run by run with the same hash.
func TestRepeatPartsReplayed(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	base, cand, saved := filepath.Join(dir, "base.jsonl"), filepath.Join(dir, "cand.jsonl"), filepath.Join(dir, "w.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--repeat", "2", "--requests", "4", "--concurrency", "2",
		"--input-tokens", "16", "--output-tokens", "2", "--save-workload", saved, "-o", base); code != 0 {
		t.Fatalf("base: exit %d: %s", code, errs)
	}
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--like", base, "-o", cand); code != 0 {
		t.Fatalf("like: exit %d: %s", code, errs)
	}
	bh, _ := readRecords(t, base)
	ch, _ := readRecords(t, cand)
	want := []record.Part{{Count: 8, Warmup: 4}, {Count: 8, Warmup: 4}} // the default warmup: two per user
	if !slices.Equal(bh.Workload.Parts, want) || !slices.Equal(ch.Workload.Parts, want) {
		t.Errorf("parts: baseline %v, replay %v, want %v", bh.Workload.Parts, ch.Workload.Parts, want)
	}
	if len(bh.Workload.Recipe) == 0 || string(bh.Workload.Recipe) != string(ch.Workload.Recipe) || bh.Workload.Hash != ch.Workload.Hash || bh.Workload.Count != 8 {
		t.Errorf("the replay's workload differs from the baseline's (hash %s vs %s, count %d)", ch.Workload.Hash, bh.Workload.Hash, bh.Workload.Count)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 16 {
		t.Fatalf("--save-workload wrote %d prompts, want 16 (2 runs of 8)", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("a prompt is sent twice: %.80s", l)
		}
		seen[l] = true
	}
}

// TestFlushCacheRefused: --flush-cache against a server without SGLang's /flush_cache is a tool
// error in one line, before any request is measured.
func TestFlushCacheRefused(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--flush-cache", "--requests", "2", "--concurrency", "1",
		"--input-tokens", "8", "--output-tokens", "2", "-o", filepath.Join(t.TempDir(), "f.jsonl"))
	if code != exitcode.Error || !strings.Contains(errs, "--flush-cache") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("exit %d, want %d with one line naming --flush-cache: %q", code, exitcode.Error, errs)
	}
}

// TestFlushCacheVLLM: --flush-cache empties a server that has vLLM's POST /reset_prefix_cache
// (the simulator in --dev-mode, as vLLM with VLLM_SERVER_DEV_MODE=1) before every run, and
// says by which endpoint.
func TestFlushCacheVLLM(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.DevMode = true })
	code, _, errs := runMain(t, "run", "--url", url, "--flush-cache", "--repeat", "2", "--requests", "2", "--concurrency", "1",
		"--input-tokens", "8", "--output-tokens", "2", "-o", filepath.Join(t.TempDir(), "f.jsonl"))
	if code != 0 || !strings.Contains(errs, "--flush-cache: the server's prefix cache was emptied (POST /reset_prefix_cache) before run 2") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
