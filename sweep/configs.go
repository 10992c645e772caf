package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"servebench/bench"
	"servebench/launch"
	"servebench/output"
	"servebench/record"
	"servebench/runspec"
)

// Servers is a sweep's server configurations: a command template (--server-cmd), the
// configurations (each a name and the flags and environment that differ), and how long a
// stopped server may take to exit before it is killed.
type Servers struct {
	Template string
	Configs  []launch.Config
	Grace    time.Duration
}

// IndexSuffix ends the name of a configuration sweep's index: STEM.configs.json.
const IndexSuffix = ".configs.json"

// Stem is the name that a configuration sweep's files share: -o without .jsonl.
func Stem(out string) string { return strings.TrimSuffix(out, ".jsonl") }

// RunConfigs runs the sweep c once per configuration of sv: it starts the server, waits until
// it answers (its time to ready recorded), runs every point into the configuration's own
// records file (STEM.NAME.jsonl, the server's output in STEM.NAME.log), and stops it. A
// configuration that does not start, never answers or dies during its points is recorded as
// a failure, and the sweep goes on with the next; an interrupt (ctx) stops the server it
// started and ends the sweep. The index of the configurations is written to
// STEM.configs.json.
func RunConfigs(ctx, hard context.Context, s runspec.Spec, c *Config, sv Servers, opt bench.Options) (*record.ConfigSweep, []*bench.Result, error) {
	if s.Output == "" {
		s.Output = bench.DefaultOutput()
	}
	stem := Stem(s.Output)
	idx := &record.ConfigSweep{Servebench: opt.Version, Template: sv.Template}
	var results []*bench.Result
	var firstErr error
	for i, cfg := range sv.Configs {
		if ctx.Err() != nil {
			break
		}
		cr, res, err := runConfig(ctx, hard, s, c, sv, cfg, stem, opt, fmt.Sprintf("server configuration %d/%d %s", i+1, len(sv.Configs), cfg.Name))
		idx.Configs, results = append(idx.Configs, cr), append(results, res)
		if err != nil && launch.AsFailure(err) == nil && firstErr == nil {
			firstErr = err // a usage error or an unwritable file: the next configuration would meet it too
			break
		}
	}
	werr := output.WriteFile(stem+IndexSuffix, nil, func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(idx)
	})
	if firstErr == nil && werr != nil {
		firstErr = fmt.Errorf("configuration index: %w", werr)
	}
	return idx, results, firstErr
}

// runConfig is one configuration: start, ready, the points, stop.
func runConfig(ctx, hard context.Context, s runspec.Spec, c *Config, sv Servers, cfg launch.Config, stem string, opt bench.Options, progress string) (record.ConfigRun, *bench.Result, error) {
	cmd, err := launch.Expand(sv.Template, cfg)
	cr := record.ConfigRun{Name: cfg.Name, Command: cmd, Env: runspec.RedactEnv(cfg.Env), Log: stem + "." + cfg.Name + ".log"}
	if err != nil {
		return cr, nil, runspec.Usage(err)
	}
	s.ServerCmd, s.ServerConfig = cmd, cfg.Name
	s.ServerEnv = append(append([]string{}, s.ServerEnv...), cfg.Env...)
	s.Output = stem + "." + cfg.Name + ".jsonl"
	if err := s.Validate(); err != nil {
		return cr, nil, fmt.Errorf("server configuration %s: %w", cfg.Name, err)
	}
	logf(opt.Log, "%s: starting %s", progress, cmd)
	srv, err := bench.StartServer(ctx, &s, cr.Log, sv.Grace)
	if f := launch.AsFailure(err); f != nil {
		cr.Failure, cr.FailureStage = f.Error(), f.Stage
		logf(opt.Log, "%s: FAILED: %s", progress, f.Error())
		return cr, nil, err
	} else if err != nil {
		return cr, nil, err
	}
	cr.ReadySeconds = srv.Ready.Seconds()
	logf(opt.Log, "%s: ready after %.1f s at %s (pid %d)", progress, cr.ReadySeconds, srv.URL, srv.PID())
	// a server that dies stops the sweep as an interrupt would: the points that finished stay
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-srv.Done():
			cancel()
		case <-sctx.Done():
		}
	}()
	opt.Observed = append(append([]record.Condition{}, opt.Observed...), bench.ReadyObserved(srv))
	res, err := Run(sctx, hard, s, c, opt)
	cancel()
	if err != nil {
		// an error met when the server had just gone (connection refused) is its death,
		// which its process's reaper may not have seen yet
		select {
		case <-srv.Done():
		case <-time.After(time.Second):
		}
	}
	dead := srv.Exited()
	srv.Stop(sv.Grace)
	if res != nil {
		cr.Records = res.Output
	}
	var f *launch.Failure
	switch {
	case dead != "":
		f = &launch.Failure{Stage: "run", What: dead, Log: cr.Log, Tail: launch.Tail(cr.Log, 12)}
	case err != nil && !runspec.IsUsage(err) && ctx.Err() == nil:
		// this configuration's server answered, then failed the run (an endpoint it lacks, a
		// file it could not write): the next configuration may do better
		f = &launch.Failure{Stage: "run", What: err.Error(), Log: cr.Log, Tail: launch.Tail(cr.Log, 12)}
	default:
		return cr, res, err
	}
	cr.Failure, cr.FailureStage = f.Error(), f.Stage
	logf(opt.Log, "%s: FAILED: %s", progress, f.Error())
	return cr, res, f
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}
