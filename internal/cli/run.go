package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"servebench/client"
	"servebench/load"
	"servebench/load/pacer"
	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
	"servebench/workload"
)

const runExamples = `  # the built-in simulator, default workload (512 in / 128 out, 200 requests, 16 users)
  servebench run

  # a real server, closed loop of 16 users
  servebench run --url http://127.0.0.1:8000 --api openai-completions \
      --input-tokens 512 --output-tokens 128 --requests 200 --concurrency 16 --seed 1 \
      -o baseline.jsonl --json baseline.json

  # open loop: Poisson arrivals at 8 req/s, at most 64 in flight, for two minutes
  servebench run --url http://127.0.0.1:8000 --rate 8 --max-concurrency 64 --duration 2m`

func newRunCmd(std *streams) *cobra.Command {
	cfg := defaultRunConfig()
	var configPath string
	cmd := &cobra.Command{
		Use:     "run",
		Short:   "Benchmark a server (default: the built-in simulator) and write a records file",
		Example: runExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := effectiveRunConfig(cmd, &cfg, configPath)
			if err != nil {
				return err
			}
			if c, err = applyLike(cmd, c); err != nil {
				return err
			}
			return runBench(cmd.Context(), std, c)
		},
	}
	bindRunFlags(cmd.Flags(), &cfg)
	cmd.Flags().StringVar(&configPath, "config", "", "YAML file with the same keys as the flags (flags override it)")
	return cmd
}

// bench is one benchmark run in progress: its target, workload and records file.
type bench struct {
	io     *streams
	cfg    *runConfig
	target client.Target
	sim    *sim.Server
	// simulated is true when the target is servebench's simulator, in-process or standalone
	simulated bool
	runs      []runSummary // every run's summary, in order (--repeat)
	shard     shard        // this process's part of a split run (--shard)
	hdr       *record.Header
	reqs      []workload.Request
	exact     bool
	tokName   string          // what measured the prompt lengths, for the header (backends.go)
	watch     *watchedBackend // says why when every request failed (backends.go)
	out       *os.File
	w         *record.Writer
	acc       *metrics.Accumulator
	flushed   time.Time
	// the load of one point (point.go): its shape, a trace's arrivals, the run start t0, the
	// live progress line, and the metrics options every summary of the file uses
	lc       load.Config
	arrivals []pacer.Arrival
	t0       time.Time
	prog     *progress
	opts     metrics.Options
	sum      *metrics.Summary
	// finished, when set, sees every record as soon as its request returns, concurrently
	// (load.Runner.Finished: selftest's count of streams held open at once)
	finished func(r *record.Record)
}

// runBench is `servebench run`: set up, send, summarise.
func runBench(ctx context.Context, std *streams, cfg *runConfig) error {
	b := &bench{io: std, cfg: cfg}
	defer b.close()
	// open the records file first: an unwritable path fails before any request is sent
	if err := b.openOutput(); err != nil {
		return err
	}
	if err := b.startTarget(ctx); err != nil {
		return err
	}
	if err := b.prepareLoad(); err != nil {
		return err
	}
	if err := b.buildWorkload(ctx); err != nil {
		return err
	}
	if err := b.recordBaseline(ctx); err != nil {
		return err
	}
	if err := b.send(ctx); err != nil {
		return err
	}
	if err := b.summarise(); err != nil {
		return err
	}
	return b.allFailed() // backends.go
}

func (b *bench) logf(format string, a ...any) {
	if !b.cfg.Quiet {
		fmt.Fprintf(b.io.stderr, format+"\n", a...)
	}
}

// openOutput creates the records file.
func (b *bench) openOutput() error {
	if b.cfg.Output == "" {
		b.cfg.Output = "servebench-" + time.Now().UTC().Format("20060102T150405Z") + ".jsonl"
	}
	f, err := os.OpenFile(b.cfg.Output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("records file: %w", err)
	}
	b.out = f
	if b.cfg.JSON != "" {
		// check now that the summary can be written, before any request is sent
		jf, err := os.OpenFile(b.cfg.JSON, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		jf.Close()
	}
	return nil
}

// startTarget starts the simulator when no --url was given, waits for the server and picks the
// model.
func (b *bench) startTarget(ctx context.Context) error {
	cfg := b.cfg
	if cfg.URL == "" {
		s, err := sim.New(sim.DefaultConfig())
		if err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		url, err := s.Start("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		b.sim, cfg.URL = s, url
		b.logf("no --url: benchmarking the built-in SIMULATED server at %s (not a real server)", url)
	}
	hdr, err := parseHeaders(cfg.Headers) // checked already by validate
	if err != nil {
		return err
	}
	conns := max(cfg.Concurrency, cfg.MaxConcurrency, 64)
	b.target = client.Target{BaseURL: strings.TrimRight(cfg.URL, "/"), APIKey: cfg.APIKey, Header: hdr, HTTP: client.NewHTTPClientClock(conns, cfg.Insecure, cfg.ArrivalClock == "kernel")}
	if err := client.WaitReady(ctx, b.target, cfg.ReadyTimeout); err != nil {
		return errors.New(redactSecret(err.Error(), cfg.APIKey))
	}
	if err := b.resolveAPI(ctx); err != nil { // backends.go: --api auto, per-API needs
		return err
	}
	b.simulated = b.sim != nil || detectSimulator(ctx, b.target)
	if cfg.Model == "" {
		models, err := client.ListModels(ctx, b.target)
		if err != nil || len(models) == 0 {
			return fmt.Errorf("no --model given and %s/v1/models listed none: %s", b.target.BaseURL, redactSecret(errOr(err, "empty list"), cfg.APIKey))
		}
		cfg.Model = models[0]
	}
	return nil
}

// buildWorkload materialises the prompts (from a file or synthetic, built against the server's
// tokenizer when it has one) and computes the workload hash.
func (b *bench) buildWorkload(ctx context.Context) error {
	cfg := b.cfg
	var err error
	if like := cfg.like; like != nil && like.reqs != nil {
		b.reqs, b.exact = like.reqs, like.exact // run --like: the baseline's very prompts
	} else if b.arrivals != nil && cfg.Prompts == "" {
		if b.reqs, b.exact, err = b.traceWorkload(ctx); err != nil {
			return err
		}
	} else if cfg.Prompts != "" {
		b.reqs, err = workload.ReadFile(cfg.Prompts, cfg.OutputTokens)
		if err != nil {
			return codeErr(ExitUsage, err)
		}
		b.exact = false
	} else if b.reqs, b.exact, err = b.synthetic(ctx); err != nil {
		return err
	}
	if cfg.SaveWorkload != "" {
		if err := workload.Save(cfg.SaveWorkload, b.reqs); err != nil {
			return err
		}
	}
	samp, _ := cfg.sampling()
	hash, err := workload.Hash(b.reqs, workloadSettings{API: cfg.API, Sampling: samp, FixedOutput: cfg.FixedOutput, Seed: cfg.Seed})
	if err != nil {
		return err
	}
	b.hdr = b.header(hash)
	// a shard sends its part of the workload, but the hash and the embedded workload are the
	// whole run's, so that `report` can check that shard files belong together
	sh, _ := cfg.shardOf()
	b.shard = sh
	if sh.split() {
		b.hdr.Shard = cfg.Shard // the runner picks this shard's requests by ID (shard.id)
	}
	return nil
}

// workloadSettings are the request settings that belong to the workload's identity.
type workloadSettings struct {
	API         string          `json:"api"`
	Sampling    client.Sampling `json:"sampling"`
	FixedOutput bool            `json:"fixed_output"`
	Seed        int64           `json:"seed"`
}

// synthetic builds seeded prompts of exact length with the server's tokenizer, or approximate
// ones when the server has no tokenize endpoint.
func (b *bench) synthetic(ctx context.Context) ([]workload.Request, bool, error) {
	cfg := b.cfg
	syn := workload.Synthetic{Count: cfg.workloadSize(), InputTokens: cfg.InputTokens, OutputTokens: cfg.OutputTokens,
		RangeRatio: cfg.RangeRatio, Seed: cfg.Seed, Chat: chatAPI(cfg.API)}
	if err := syn.Validate(); err != nil {
		return nil, false, codeErr(ExitUsage, err)
	}
	tok, err := b.promptTokenizer(ctx) // backends.go: --tokenizer, the server's, or none
	if err != nil {
		return nil, false, err
	}
	start := time.Now()
	reqs, exact, err := syn.Generate(ctx, tok)
	if err != nil {
		return nil, false, fmt.Errorf("build workload: %s", redactSecret(err.Error(), cfg.APIKey))
	}
	b.logf("built %d prompts in %v (lengths %s)", len(reqs), time.Since(start).Round(time.Millisecond), map[bool]string{true: "exact", false: "approximate"}[exact])
	return reqs, exact, nil
}

// header is the records file's first line.
func (b *bench) header(hash string) *record.Header {
	cfg := b.cfg
	src, lengths := "synthetic", "approximate"
	if cfg.Prompts != "" {
		src = filepath.Base(cfg.Prompts) // the file, wherever this run found it
	}
	if b.exact {
		lengths = "exact"
	}
	h := &record.Header{
		Version: Version, GoVersion: runtime.Version(),
		Command: append([]string{"servebench"}, redactArgs(os.Args[1:])...),
		Target:  record.Target{URL: b.target.BaseURL, API: cfg.API, Model: cfg.Model, Simulated: b.simulated},
		Workload: record.Workload{Hash: hash, Source: src, Count: len(b.reqs), Seed: cfg.Seed,
			PromptLengths: lengths, File: cfg.SaveWorkload},
		Config: cfg.asMap(),
	}
	if b.exact {
		h.Workload.Tokenizer = b.tokName
	}
	return h
}

// send runs the load as one run and streams records to the file and the accumulator.
func (b *bench) send(ctx context.Context) error {
	if err := b.begin(); err != nil {
		return err
	}
	b.logf("sending: %s", describeLoad(b.cfg))
	sum, err := b.runRepeats(ctx)
	b.sum = sum
	return err
}

func describeLoad(c *runConfig) string {
	stop := fmt.Sprintf("%d requests", c.Requests)
	if c.Duration > 0 {
		stop = fmt.Sprintf("for %v", c.Duration)
	}
	if c.Ramp != "" || c.Trace != "" {
		what := "ramp " + c.Ramp + " (" + c.Arrival + " arrivals)"
		if c.Trace != "" {
			what = "trace " + c.Trace
		}
		return fmt.Sprintf("%s, %s after %d warmup", what, stop, c.Warmup)
	}
	if c.Rate > 0 {
		capS := ""
		if c.MaxConcurrency > 0 {
			capS = fmt.Sprintf(", at most %d in flight", c.MaxConcurrency)
		}
		return fmt.Sprintf("%s arrivals at %g req/s%s, %s after %d warmup", c.Arrival, c.Rate, capS, stop, c.Warmup)
	}
	return fmt.Sprintf("%d users (closed loop), %s after %d warmup", c.Concurrency, stop, c.Warmup)
}

// summarise prints the summary (the same code as `servebench report`) and writes --json.
func (b *bench) summarise() error {
	if err := b.out.Sync(); err != nil {
		return fmt.Errorf("records file: %w", err)
	}
	sum := b.sum
	if err := printRuns(b.io.stdout, "text", b.hdr, b.runs); err != nil {
		return err
	}
	if b.cfg.JSON != "" {
		if err := writeSummaryFile(b.cfg.JSON, "json", b.hdr, sum); err != nil {
			return err
		}
	}
	b.logf("records: %s", b.cfg.Output)
	msg, err := sloGate(b.cfg.FailBelow, worstAttainment(b.runs, sum))
	if msg != "" {
		b.logf("%s", msg)
	}
	return err
}

func (b *bench) close() {
	if b.out != nil {
		b.out.Close()
	}
	if b.sim != nil {
		b.sim.Close()
	}
}

// detectSimulator asks the server whether it is servebench's simulator (its /version answer
// says so), so that a run against a standalone `servebench sim` is labelled simulated too.
func detectSimulator(ctx context.Context, t client.Target) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := t.NewRequest(ctx, http.MethodGet, "/version", nil)
	if err != nil {
		return false
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var v struct {
		Simulator bool `json:"simulator"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v) == nil && v.Simulator
}
