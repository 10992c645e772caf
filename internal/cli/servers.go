package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"servebench/bench"
	"servebench/exitcode"
	"servebench/launch"
	"servebench/output"
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
	if s.Output == "" {
		s.Output = bench.DefaultOutput() // named here, so that the index's name can be said
	}
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
	if !s.Quiet {
		p := sweep.Stem(s.Output) + sweep.IndexSuffix
		fmt.Fprintf(std.stderr, "configurations: %s (servebench report it, -o page.html for the page)\n", p)
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

// reportConfigs is `servebench report STEM.configs.json`: every configuration's records file
// read again (each path as recorded, else beside the index), and the report written in format.
func reportConfigs(st *streams, path, format, out string) error {
	if format != "text" && format != "md" && format != "html" {
		return usageErr("--format %s: a configuration sweep's report is text, md or html (its index, %s, is its JSON)", format, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var idx record.ConfigSweep
	if err := json.Unmarshal(b, &idx); err != nil || idx.Configs == nil {
		return usageErr("%s: not the index of a configuration sweep (sweep --server-cmd writes STEM.configs.json): %v", path, err)
	}
	ins := make([]report.Input, len(idx.Configs))
	for i, c := range idx.Configs {
		if c.Records == "" {
			continue
		}
		p := c.Records
		if _, err := os.Stat(p); err != nil && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), filepath.Base(p))
		}
		in, closeIn, err := record.OpenInputs([]string{p}, false)
		if err != nil {
			return fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		defer closeIn()
		ins[i] = report.Input{Label: c.Name, Header: in[0].Header, Records: in[0].Records(skipped(st.stderr))}
	}
	return output.WriteFile(out, st.stdout, func(w io.Writer) error { return report.RenderConfigSweep(w, format, &idx, ins) })
}
