package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"servebench/record"
)

// sweepFixture builds a records file of a concurrency sweep: each point of points run
// repeats times (one run each without repeats), every run a fixture run with TTFT and ITL
// around ttft and itl ms. points nil is a plain --repeat file at 4 users.
func sweepFixture(t *testing.T, points []int, repeats int, ttft, itl float64, seed uint64) Input {
	t.Helper()
	sp := fixtureSpec{file: "sweep.jsonl", runs: len(points) * repeats, n: 12, ttft: ttft, itl: itl, seed: seed}
	h := fixtureHeader(sp)
	if points != nil {
		delete(h.Config, "concurrency") // a sweep's header has no one load: each point's is in its run-end line
		h.Label, h.Sweep = "sweep", "concurrency"
	} else {
		points = []int{0}
	}
	var b bytes.Buffer
	w := record.NewWriter(&b)
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	run := 0
	for _, p := range points {
		for k := range repeats {
			for _, r := range fixtureRecords(sp, run, rng) {
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
			}
			end := &record.RunEnd{Run: run, Concurrency: p, Stop: "requests", Label: fmt.Sprintf("concurrency %d, repeat %d", p, k+1)}
			if err := w.WriteRunEnd(end); err != nil {
				t.Fatal(err)
			}
			run++
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return readerInput(t, "sweep.jsonl", bytes.NewReader(b.Bytes()))
}

// TestGoBenchNames checks the benchmark names: one per sweep point, keeping its load; one
// for every run of a --repeat.
func TestGoBenchNames(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "gobench", sweepFixture(t, []int{4, 8}, 2, 40, 12, 1)); err != nil {
		t.Fatal(err)
	}
	names := benchNames(t, b.String())
	want := []string{"Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=4", "Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=4",
		"Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=8", "Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=8"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", names, want)
	}
	for _, k := range []string{"load.mode:", "load.concurrency:", "load.rate:"} {
		if strings.Contains(b.String(), k) {
			t.Errorf("%s is a file-level line, not in the name:\n%s", k, b.String())
		}
	}
	if !strings.Contains(b.String(), "\nload.requests: 12\n") {
		t.Errorf("the requests per point are not a file-level line:\n%s", b.String())
	}

	h := header(false)
	h.Config = map[string]any{"rate": 12.5, "arrival": "gamma", "burstiness": 0.5, "max_concurrency": 32}
	if got := goBenchName(h, loadOf(h, nil)); got != "BenchmarkServe/model=llama-3-8b/api=openai-chat/rate=12.5/arrival=gamma/burst=0.5/maxconc=32" {
		t.Errorf("open-loop name %s", got)
	}
	h.Ends = []record.RunEnd{{Run: 3, Rate: 4}}
	if got := goBenchName(h, loadOf(h, &h.Ends[0])); !strings.Contains(got, "/rate=4/") {
		t.Errorf("a sweep point's rate is not in its name: %s", got)
	}
}

// benchNames are the benchmark names of a gobench file as benchfmt reads them; it also checks
// that every line parses and that the units say which direction is better.
func benchNames(t *testing.T, s string) []string {
	t.Helper()
	rd := benchfmt.NewReader(strings.NewReader(s), "x.bench")
	var names []string
	for rd.Scan() {
		switch r := rd.Result().(type) {
		case *benchfmt.Result:
			names = append(names, string(r.Name))
			if r.GetConfig("server.version") != "0.8.5" || r.GetConfig("gpu.name") != "NVIDIA L4" {
				t.Errorf("config server.version %q gpu.name %q", r.GetConfig("server.version"), r.GetConfig("gpu.name"))
			}
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", r)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if u := rd.Units(); u.GetBetter("ttft-p50-ms") != -1 || u.GetBetter("out-tok/s") != 1 {
		t.Errorf("better: ttft %d out-tok/s %d, want -1 and +1", u.GetBetter("ttft-p50-ms"), u.GetBetter("out-tok/s"))
	}
	return names
}

// buildBenchstat builds the real benchstat, at the golang.org/x/perf version of go.mod, into
// a directory removed at the end of the test.
func buildBenchstat(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds benchstat")
	}
	path := filepath.Join(t.TempDir(), "benchstat")
	if out, err := exec.Command("go", "build", "-o", path, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Skipf("cannot build benchstat (golang.org/x/perf/cmd/benchstat): %v: %s", err, out)
	}
	return path
}

// runBenchstat renders base and cand as gobench files and returns benchstat's table.
func runBenchstat(t *testing.T, bin string, base, cand Input) string {
	t.Helper()
	dir := t.TempDir()
	var args []string
	for _, in := range []struct {
		name string
		in   Input
	}{{"base.bench", base}, {"cand.bench", cand}} {
		var b bytes.Buffer
		if err := Render(&b, "gobench", in.in); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, in.name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, in.name+"="+path)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	return string(out)
}

// unitRows returns the rows of benchstat's table of unit: name → the rest of the row.
func unitRows(t *testing.T, out, unit string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, "│") && strings.Contains(l, " "+unit+" "):
			in = true
		case in && strings.HasPrefix(l, "Serve/"):
			name, rest, _ := strings.Cut(l, " ")
			if _, dup := rows[name]; dup {
				t.Errorf("%s: two rows for %s", unit, name)
			}
			rows[name] = rest
		case in && !strings.Contains(l, "│"):
			return rows
		}
	}
	return rows
}

var verdict = regexp.MustCompile(`(~|[-+]\d+\.\d+%) \(p=(\d\.\d+) n=(\d+)\)`)

// TestBenchstat runs the real benchstat on our files.
func TestBenchstat(t *testing.T) {
	bin := buildBenchstat(t)
	t.Run("sweeps", func(t *testing.T) { benchstatSweeps(t, bin) })
	t.Run("repeats", func(t *testing.T) { benchstatRepeats(t, bin) })
}

// benchstatSweeps compares two two-point sweeps: one row per point in every unit's table,
// each with a verdict; with six runs a point, the candidate's lower TTFT is a significant
// negative change and its higher output rate a positive one, n=6.
func benchstatSweeps(t *testing.T, bin string) {
	const conc4, conc8 = "Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=4", "Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=8"
	out := runBenchstat(t, bin, sweepFixture(t, []int{4, 8}, 1, 40, 12, 1), sweepFixture(t, []int{4, 8}, 1, 30, 10, 2))
	t.Logf("benchstat, one run a point:\n%s", out)
	for _, unit := range []string{"ttft-p50-ms", "out-tok/s"} {
		rows := unitRows(t, out, unit)
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want one per point: %v", unit, len(rows), rows)
		}
		for _, p := range []string{conc4, conc8} {
			if m := verdict.FindStringSubmatch(rows[p]); m == nil || m[3] != "1" {
				t.Errorf("%s %s: no verdict with n=1: %q", unit, p, rows[p])
			}
		}
	}

	out = runBenchstat(t, bin, sweepFixture(t, []int{4, 8}, 6, 40, 12, 3), sweepFixture(t, []int{4, 8}, 6, 30, 10, 4))
	t.Logf("benchstat, six runs a point:\n%s", out)
	for unit, sign := range map[string]string{"ttft-p50-ms": "-", "ttft-p99-ms": "-", "itl-p50-ms": "-", "out-tok/s": "+", "req/s": "+"} {
		rows := unitRows(t, out, unit)
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want one per point: %v", unit, len(rows), rows)
		}
		for _, p := range []string{conc4, conc8} {
			m := verdict.FindStringSubmatch(rows[p])
			if m == nil || !strings.HasPrefix(m[1], sign) || m[2] >= "0.05" || m[3] != "6" {
				t.Errorf("%s %s: %q, want a significant %s change with n=6", unit, p, rows[p], sign)
			}
		}
	}
}

// benchstatRepeats compares two six-run --repeat files: one row, n=6.
func benchstatRepeats(t *testing.T, bin string) {
	out := runBenchstat(t, bin, sweepFixture(t, nil, 6, 40, 12, 5), sweepFixture(t, nil, 6, 30, 10, 6))
	t.Logf("benchstat:\n%s", out)
	rows := unitRows(t, out, "ttft-p50-ms")
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1: %v", len(rows), rows)
	}
	for name, row := range rows {
		if m := verdict.FindStringSubmatch(row); name != "Serve/model=llama-3.1-8b-instruct/api=openai-completions/conc=4" ||
			m == nil || !strings.HasPrefix(m[1], "-") || m[3] != "6" {
			t.Errorf("%s: %q, want a lower TTFT with n=6", name, row)
		}
	}
}
