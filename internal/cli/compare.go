package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"servebench/compare"
	"servebench/exitcode"
	"servebench/report"
)

const compareExamples = `  servebench compare base.jsonl cand.jsonl                       # verdict, per metric, with statistics
  servebench compare base.jsonl cand.jsonl --expect-change server.version --threshold 3
  servebench compare base.jsonl cand.jsonl --format json          # for CI; exit 4 regressed, 5 not comparable, 6 inconclusive, 8 measured nothing, 9 provisional`

// compareConfig is the configuration of `servebench compare`.
type compareConfig struct {
	expect    []string
	threshold float64
	tail      float64
	format    string
	explain   bool
}

func newCompareCmd(st *streams) *cobra.Command {
	var c compareConfig
	cmd := &cobra.Command{
		Use:   "compare BASE.jsonl CANDIDATE.jsonl",
		Short: "Judge a candidate run against a baseline: conditions, statistics, verdict",
		Long: `Compare two records files by compare's verdict policy (its rules in order, with their
constants: docs/compare-policy.md; --explain shows the ones that fired). First the conditions:
any difference in the workload, load, sampling, model, quantisation, hardware, server version
or flags (or in how much of the prompts the server's prefix cache served) makes the runs not
comparable, unless named with --expect-change. A run whose own health record says its client
was disturbed for a quarter of it or more is left out of every metric (two runs a side stay);
runs disturbed for less are kept; both are named. Then each key metric: a 95% interval of the
ratio candidate/base from the runs' spread (run --repeat); with one run a side, from the run's
own requests (a block bootstrap over time windows) and an assumed run-to-run spread (3%), and
the p99s are shown but not judged. A metric whose whole interval lies beyond --threshold
(--tail-threshold for a p99) improved or regressed; one whose interval lies inside it is
equivalent ("~" when not significant); one whose interval straddles it is inconclusive, with
the runs per side that would decide it. TTFT and E2E (p50 and p99) and the throughputs are
also judged at equal contention (requests grouped by how many others overlapped their TTFT; a
throughput as tokens or requests per second of request time): a change that the mix of
contention explains is inconclusive, and an inconclusive one whose figure there is equivalent
does not hold the verdict. Beside a disturbed run a p99's change is not called unless its
median made the same change; an inconclusive p99 whose interval holds no change does not hold
the verdict. A metric with a run at 0 (goodput) is compared on arithmetic means. Where both
sides judged answers, their accuracy's difference can make the verdict regressed or improved.
The verdict is improved, regressed, inconclusive, no significant change, not comparable or
measured nothing, and names how many metrics decided it and which did not; a side that was not
steady or invalid makes it PROVISIONAL. A file compared with itself (one path twice, or two files of identical
records) has no change by construction: a usage error.

Exit codes: 0 no regression, 4 regressed, 5 not comparable, 6 inconclusive, 8 a side measured
nothing (every request failed or was warmup), 9 provisional (a side not steady or invalid;
before 4 and 6), 1 and 2 as usual (2 also for a file compared with itself).`,
		Example: compareExamples,
		Args:    twoFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := report.LookupCompare(c.format); !ok {
				return usageErr("--format %q: want one of %s", c.format, strings.Join(report.CompareFormats(), ", "))
			}
			return runCompare(st, &c, args[0], args[1])
		},
	}
	cmd.Flags().StringArrayVar(&c.expect, "expect-change", nil, "a condition you meant to change: a `key`, group or last key segment, or a comma-separated list of them (repeatable); a setting names the conditions that follow from it")
	cmd.Flags().Float64Var(&c.threshold, "threshold", 5, "smallest change in percent that counts as improved or regressed")
	cmd.Flags().Float64Var(&c.tail, "tail-threshold", 0, "the threshold in percent of the p99s, which move more from run to run (0: twice --threshold)")
	cmd.Flags().StringVar(&c.format, "format", "text", strings.Join(report.CompareFormats(), " | "))
	cmd.Flags().BoolVar(&c.explain, "explain", false, "after the verdict, the rules of the policy that fired on each metric and on the verdict, with their figures (docs/compare-policy.md); JSON carries them always, as why")
	return cmd
}

// runCompare reads both files, compares, prints, and returns the verdict's exit code
// (compare.Result.ExitCode) with its one-line message.
func runCompare(st *streams, c *compareConfig, basePath, candPath string) error {
	opt, err := compare.PercentOptions(c.threshold, c.tail, c.expect)
	if err != nil {
		return usageErr("%v", err)
	}
	if same := sameRecords(basePath, candPath); same != "" {
		return usageErr("%s and %s %s: compared with itself a run has no change by construction; compare a candidate run with its baseline (run it again with run --like %s)",
			basePath, candPath, same, basePath)
	}
	base, err := compare.ReadSide(basePath, skipped(st.stderr))
	if err != nil {
		return err
	}
	cand, err := compare.ReadSide(candPath, skipped(st.stderr))
	if err != nil {
		return err
	}
	if err := compare.CheckExpect(base.Header, cand.Header, c.expect); err != nil {
		return usageErr("%v", err)
	}
	opt.Goodput = base.HasSLO() && cand.HasSLO()
	res := compare.Compare(base, cand, opt)
	render := report.RenderCompare
	if c.explain {
		render = report.RenderCompareExplained
	}
	if err := render(st.stdout, c.format, res, basePath, candPath); err != nil {
		return err
	}
	switch code := res.ExitCode(); code {
	case exitcode.Nothing:
		return codeErr(code, errors.New(report.NothingLine(res)))
	case exitcode.Provisional:
		return codeErr(code, fmt.Errorf("provisional %s: %s", res.Verdict, strings.Join(res.Provisional, "; ")))
	case exitcode.Regression:
		return codeErr(code, fmt.Errorf("candidate regressed (%s)", res.RegressedMetrics()))
	case exitcode.NotComparable:
		return codeErr(code, fmt.Errorf("not comparable: conditions differ"))
	case exitcode.Inconclusive:
		return codeErr(code, fmt.Errorf("inconclusive: more runs per side would decide it"))
	}
	return nil
}

// sameRecords says whether the two paths are one file ("are the same file") or two files of
// identical bytes ("hold identical records"): either way every figure is equal by construction,
// and the statistics would only report noise in their own resampling. "" otherwise, and when
// a file cannot be read (ReadSide then names the error).
func sameRecords(a, b string) string {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	switch {
	case errA != nil || errB != nil || sa.Size() != sb.Size():
		return ""
	case os.SameFile(sa, sb):
		return "are the same file"
	}
	fa, err := os.Open(a)
	if err != nil {
		return ""
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return ""
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 1<<16), bufio.NewReaderSize(fb, 1<<16)
	pa, pb := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(ra, pa)
		nb, eb := io.ReadFull(rb, pb)
		if na != nb || !bytes.Equal(pa[:na], pb[:nb]) {
			return ""
		}
		if ea != nil || eb != nil {
			if (ea == io.EOF || ea == io.ErrUnexpectedEOF) && ea == eb {
				return "hold identical records"
			}
			return ""
		}
	}
}
