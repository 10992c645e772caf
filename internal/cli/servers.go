package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"servebench/bench"
	"servebench/exitcode"
	"servebench/launch"
	"servebench/record"
	"servebench/report"
	"servebench/runspec"
	"servebench/sweep"
)

// serverConfigs are the configurations of a sweep that starts its server: --server-config
// values and a --server-configs file, in that order; none is one configuration, "default",
// the command as given.
func serverConfigs(s *runspec.Spec, flags []string, file string, grace time.Duration) (sweep.Servers, error) {
	sv := sweep.Servers{Template: s.ServerCmd, Grace: grace}
	if s.ServerCmd == "" {
		return sv, usageErr("--server-config and --server-configs are configurations of --server-cmd: give the command too")
	}
	if grace <= 0 {
		return sv, usageErr("--server-grace %v: want a positive duration", grace)
	}
	for _, f := range flags {
		c, err := launch.ParseConfig(f)
		if err != nil {
			return sv, usageErr("%v", err)
		}
		sv.Configs = append(sv.Configs, c)
	}
	if file != "" {
		cs, err := launch.LoadFile(file)
		if err != nil {
			return sv, usageErr("%v", err)
		}
		sv.Configs = append(sv.Configs, cs...)
	}
	if len(sv.Configs) == 0 {
		sv.Configs = []launch.Config{{Name: "default"}}
	}
	if err := launch.CheckNames(sv.Configs); err != nil {
		return sv, usageErr("%v", err)
	}
	for _, c := range sv.Configs {
		if _, err := launch.Expand(sv.Template, c); err != nil {
			return sv, usageErr("%v", err)
		}
	}
	return sv, nil
}

// configSweep is `servebench sweep --server-cmd`: every configuration started, swept and
// stopped in turn, then the configurations side by side. A configuration that failed is
// exit 1 once the others have run.
func configSweep(ctx context.Context, std *streams, s runspec.Spec, c *sweep.Config, sv sweep.Servers) error {
	idx, results, err := sweep.RunConfigs(ctx, hardStop(ctx), s, c, sv, benchOptions(std, &s))
	if idx == nil {
		return err
	}
	sweeps := make([]report.SweepInput, len(results))
	for i, r := range results {
		if r != nil {
			sweeps[i] = report.SweepInput{Header: r.Header, Runs: r.Runs}
		}
	}
	if perr := report.ConfigSweep(std.stdout, idx, sweeps); err == nil {
		err = perr
	}
	var failed []string
	for _, cr := range idx.Configs {
		if cr.Failure != "" {
			failed = append(failed, cr.Name)
		}
	}
	if err == nil && len(failed) > 0 {
		err = codeErr(exitcode.Error, fmt.Errorf("%d of %d server configurations failed: %s (each one's log is named above)",
			len(failed), len(idx.Configs), strings.Join(failed, ", ")))
	}
	return err
}

// runServer is `servebench run --server-cmd`: the server started (its output in the records'
// stem + .server.log), the run, the server stopped.
func runServer(ctx context.Context, std *streams, s runspec.Spec, like *runspec.Base) error {
	if s.Output == "" {
		s.Output = bench.DefaultOutput()
	}
	logPath := sweep.Stem(s.Output) + ".server.log"
	srv, err := bench.StartServer(ctx, &s, logPath, 10*time.Second)
	if f := launch.AsFailure(err); f != nil {
		return codeErr(exitcode.Error, f)
	} else if err != nil {
		return err
	}
	if !s.Quiet {
		fmt.Fprintf(std.stderr, "server ready after %.1f s at %s (pid %d, log %s)\n", srv.Ready.Seconds(), srv.URL, srv.PID(), logPath)
	}
	err = runBench(ctx, std, s, like, []record.Condition{bench.ReadyObserved(srv)})
	dead := srv.Exited()
	srv.Stop(10 * time.Second)
	if dead != "" && err == nil {
		err = codeErr(exitcode.Error, &launch.Failure{Stage: "run", What: dead, Log: logPath, Tail: launch.Tail(logPath, 12)})
	}
	return err
}
