// Package cli is servebench's command line: one file per subcommand, testable in-process
// through Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"servebench/bench"
	"servebench/exitcode"
	"servebench/record"
	"servebench/runspec"
)

// exitError carries an exit code with its one-line message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks err as a usage error (exit 2).
func usageErr(format string, a ...any) error {
	return &exitError{code: exitcode.Usage, err: fmt.Errorf(format, a...)}
}

// codeErr returns err with an explicit exit code.
func codeErr(code int, err error) error { return &exitError{code: code, err: err} }

type hardKey struct{}

// WithHardStop attaches the hard-stop context (second Ctrl-C) to ctx, whose own cancellation
// is the soft stop (first Ctrl-C). Without it the hard stop is ctx's parent chain only.
func WithHardStop(soft, hard context.Context) context.Context {
	return context.WithValue(soft, hardKey{}, hard)
}

// hardStop returns the hard-stop context attached to ctx, or a context never cancelled by a
// soft stop (ctx without its cancellation) when none was attached.
func hardStop(ctx context.Context) context.Context {
	if h, ok := ctx.Value(hardKey{}).(context.Context); ok {
		return h
	}
	return context.WithoutCancel(ctx)
}

// streams are the process's standard streams, passed explicitly so tests run in-process.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	args           []string // the command line, for the records header
}

// Main runs servebench with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	std := &streams{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	root := newRoot(std)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitcode.OK
	}
	fmt.Fprintln(stderr, "servebench: "+oneLine(err.Error()))
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return exitcode.Interrupted
	}
	return exitCode(err)
}

// exitCode maps an error to its documented exit code: the orchestrator's typed errors, this
// package's own, and cobra's unknown command; every other failure is a tool error.
func exitCode(err error) int {
	var ee *exitError
	var gate *bench.GateError
	var invalid *bench.InvalidError
	var inputs *record.InputsError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case runspec.IsUsage(err), errors.As(err, &inputs):
		return exitcode.Usage
	case errors.As(err, &gate):
		return exitcode.SLO
	case errors.As(err, &invalid):
		return exitcode.Invalid
	}
	if strings.HasPrefix(err.Error(), "unknown command ") {
		return exitcode.Usage // cobra's own, before any flag or argument is parsed
	}
	return exitcode.Error
}

// usageArgs makes an argument check's failure a usage error (exit 2). Flag errors become
// usage errors through the root's FlagErrorFunc; every other error keeps its own code, so a
// file name or a server message that happens to contain "invalid argument" is not mistaken
// for a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &exitError{code: exitcode.Usage, err: err}
		}
		return nil
	}
}

// wrapArgs applies usageArgs to cmd and every command below it.
func wrapArgs(cmd *cobra.Command) {
	if cmd.Args != nil {
		cmd.Args = usageArgs(cmd.Args)
	}
	for _, c := range cmd.Commands() {
		wrapArgs(c)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newRoot(std *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "servebench",
		Short: "Benchmark LLM inference servers: a reproducible baseline of throughput, TTFT and ITL",
		Long: `servebench measures an LLM inference server on your own hardware: throughput, time to
first token (TTFT), inter-token latency (ITL), TPOT and end-to-end latency with percentiles.
It fixes the workload, warms the server, timestamps every streamed event on a monotonic clock,
and writes a records file that every other command reads.

With no --url, servebench run benchmarks its built-in simulated server.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.AddCommand(newRunCmd(std), newReportCmd(std), newSimCmd(std))
	root.AddCommand(newEnvCmd(std), newCompareCmd(std))
	root.AddCommand(newSweepCmd(std), newQuickCmd(std), newSelftestCmd(std), newVersionCmd(std), newCaptureCmd(std))
	versionFlag(root)
	wordTypes(root)
	completeValues(root)
	root.SetFlagErrorFunc(flagError)
	wrapArgs(root)
	return root
}

// Command returns servebench's command tree, with its output discarded, for tools that read
// the commands and flags (the generated reference in docs/cli).
func Command() *cobra.Command {
	return newRoot(&streams{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
}
