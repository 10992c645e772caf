// Command herd-bench measures how far a closed loop's figures are from the truth at the start
// of its measured window, against a reference server whose timing is exact: `servebench sim`
// in fixed mode (every first token TTFT after it reads the request, then one every ITL), in a
// process of its own, its truth log paired with the client's records by X-Request-Id as the
// selftest pairs them (selftest.PairAccuracy). Each trial runs
//
//	servebench run --concurrency C --requests R·C --warmup C --input-tokens 16 --output-tokens 64
//
// against a fresh simulator, for every C in -streams and R in -per-user, and prints the
// errors of TTFT, ITL, the event stamps and the send stamp (docs/accuracy.md, "The start of a
// measured window"), and TTFT's error split: "wire", counted on the simulator's side from the
// kernel's receive of the request rather than its read, and the simulator's read lag between
// the two, so a TTFT error that is the reference server reading late under load is told apart
// from one in the client's stamps. Given -b, each trial runs both builds one after the other, alternating
// which goes first, so that a noisy machine weighs on both alike; one simulator binary (-sim,
// default -a) serves both. The load average before each trial is printed beside it.
//
//	go run ./scripts/herd-bench -a /tmp/servebench-main -b ./servebench -runs 3
//
// With -rate R it runs an open loop instead: `run --rate R --requests R·C --warmup 0` for each
// C in -streams (here the seconds of arrivals, not users; -per-user is ignored), so that the
// open loop's send path, which waits for each arrival, is measured beside the stamps of the
// streams already in flight.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"servebench/metrics"
	"servebench/selftest"
)

type config struct {
	a, b, sim        string
	streams, perUser []int
	runs             int
	ttft, itl        time.Duration
	input, output    int
	dir              string
	rate             float64
}

func main() {
	var c config
	var streams, perUser string
	flag.StringVar(&c.a, "a", "", "servebench binary to measure (required)")
	flag.StringVar(&c.b, "b", "", "a second servebench binary, run alternately with -a")
	flag.StringVar(&c.sim, "sim", "", "servebench binary whose `sim` is the reference server (default -a)")
	flag.StringVar(&streams, "streams", "256,1024", "closed-loop users (streams), comma-separated")
	flag.StringVar(&perUser, "per-user", "1,2,3,4", "measured requests per user, comma-separated")
	flag.IntVar(&c.runs, "runs", 3, "trials of each build at each point")
	flag.DurationVar(&c.ttft, "ttft", 50*time.Millisecond, "the simulator's fixed TTFT")
	flag.DurationVar(&c.itl, "itl", 20*time.Millisecond, "the simulator's fixed ITL")
	flag.IntVar(&c.input, "input-tokens", 16, "prompt tokens")
	flag.IntVar(&c.output, "output-tokens", 64, "output tokens")
	flag.Float64Var(&c.rate, "rate", 0, "an open loop at this many req/s, for -streams seconds each (0: closed loops)")
	flag.StringVar(&c.dir, "dir", "", "directory for records and truth logs (default: a temporary one, removed)")
	flag.Parse()
	var err error
	if c.streams, err = ints(streams); err == nil {
		c.perUser, err = ints(perUser)
	}
	if c.rate > 0 {
		c.perUser = []int{1}
	}
	if err == nil && c.a == "" {
		err = errors.New("give -a, a servebench binary")
	}
	if err == nil && c.runs < 1 {
		err = errors.New("-runs must be at least 1")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "herd-bench: %v\n", err)
		os.Exit(2)
	}
	if c.sim == "" {
		c.sim = c.a
	}
	if err := run(&c, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "herd-bench: %v\n", err)
		os.Exit(1)
	}
}

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// run runs every trial and prints one Markdown row per trial and build.
func run(c *config, w io.Writer) error {
	if c.dir == "" {
		d, err := os.MkdirTemp("", "herd-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	} else if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	builds := []string{c.a}
	if c.b != "" {
		builds = append(builds, c.b)
	}
	fmt.Fprintf(w, "sim --ttft %v --itl %v; run --input-tokens %d --output-tokens %d --warmup C; errors in ms (client − truth)\n\n",
		c.ttft, c.itl, c.input, c.output)
	fmt.Fprintln(w, "| streams | per user | build | run | load avg | TTFT p50 | TTFT p99 | ITL p99 | event p50 | event p99 | late p50 | late p99 | send p50 | send p99 | wire p50 | wire p99 | read lag p50 | read lag p99 | paired |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for i := range c.runs {
		for _, n := range c.streams {
			for _, r := range c.perUser {
				for k := range builds {
					b := builds[(k+i)%len(builds)] // alternate which build goes first
					row, err := trial(c, b, n, r, i)
					if err != nil {
						return fmt.Errorf("%s, %d streams, %d per user: %w", b, n, r, err)
					}
					fmt.Fprintln(w, row)
				}
			}
		}
	}
	return nil
}

// trial runs one build once against a fresh simulator and returns its row.
func trial(c *config, bin string, streams, perUser, i int) (string, error) {
	tag := fmt.Sprintf("%s-%d-%d-%d", filepath.Base(bin), streams, perUser, i)
	truth := filepath.Join(c.dir, tag+"-truth.jsonl")
	records := filepath.Join(c.dir, tag+".jsonl")
	ctx := context.Background()
	simCmd, url, err := startSim(ctx, c, truth)
	if err != nil {
		return "", err
	}
	load := loadAvg()
	args := []string{"run", "-q", "--url", url, "-o", records, "--force",
		"--concurrency", strconv.Itoa(streams), "--requests", strconv.Itoa(perUser * streams),
		"--warmup", strconv.Itoa(streams), "--input-tokens", strconv.Itoa(c.input),
		"--output-tokens", strconv.Itoa(c.output)}
	if c.rate > 0 {
		args = []string{"run", "-q", "--url", url, "-o", records, "--force", "--prewarm-connections",
			"--rate", strconv.FormatFloat(c.rate, 'f', -1, 64), "--requests", strconv.Itoa(int(c.rate * float64(streams))),
			"--warmup", "0", "--input-tokens", strconv.Itoa(c.input), "--output-tokens", strconv.Itoa(c.output)}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	out, runErr := cmd.CombinedOutput()
	_ = simCmd.Process.Signal(os.Interrupt) // the simulator flushes its truth log on exit
	if err := simCmd.Wait(); err != nil {
		return "", fmt.Errorf("simulator: %w", err)
	}
	if _, err := os.Stat(records); err != nil {
		return "", fmt.Errorf("run: %v: %s", runErr, lastLine(out))
	}
	a, err := selftest.PairAccuracy(records, truth)
	if err != nil {
		return "", err
	}
	note := ""
	if runErr != nil {
		note = fmt.Sprintf(" (run: %v)", runErr)
	}
	q := func(xs []float64, p float64) string {
		if len(xs) == 0 {
			return "–"
		}
		return fmt.Sprintf("%+.2f", metrics.Quantile(xs, p))
	}
	return fmt.Sprintf("| %d | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d%s |",
		streams, perUser, filepath.Base(bin), i+1, load,
		q(a.TTFT, 50), q(a.TTFT, 99), q(a.ITL, 99), q(a.Event, 50), q(a.Event, 99),
		q(a.Late, 50), q(a.Late, 99), q(a.SendErr, 50), q(a.SendErr, 99),
		q(a.Wire, 50), q(a.Wire, 99), q(a.ReadLag, 50), q(a.ReadLag, 99), a.TTFTPaired, a.Measured, note), nil
}

// startSim starts the reference server on a free loopback port and waits for its URL.
func startSim(ctx context.Context, c *config, truth string) (*exec.Cmd, string, error) {
	cmd := exec.CommandContext(ctx, c.sim, "sim", "--addr", "127.0.0.1:0", "--seed", "1",
		"--ttft", c.ttft.String(), "--itl", c.itl.String(), "--truth", truth)
	pr, pw, err := os.Pipe() // it names its URL on stdout or stderr
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, "", fmt.Errorf("start simulator: %w", err)
	}
	u, err := selftest.AwaitListening(ctx, pr)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", err
	}
	return cmd, u, nil
}

// loadAvg is the one-minute load average, or "?" where /proc has none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}
