package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"servebench/client"
	"servebench/client/apis"
	"servebench/exitcode"
	"servebench/report"
	"servebench/runspec"
	"servebench/sweep"
)

// usualPorts are where the servers a newcomer runs listen by default, in the order quick
// asks them (loopback only: quick never looks beyond this machine).
var usualPorts = []string{"vLLM=8000", "SGLang=30000", "llama.cpp=8080", "Ollama=11434", "LM Studio=1234"}

const quickExamples = `  servebench quick                      # find a server on this machine's usual ports, answer in a minute
  servebench quick --url http://127.0.0.1:8000 --model my-model   # that server`

func newQuickCmd(std *streams) *cobra.Command {
	var url, model, out string
	var probes []string
	var users []int
	var per time.Duration
	cmd := &cobra.Command{
		Use:   "quick",
		Short: "Find a local server and say in one sentence how many users it serves",
		Long: `Look for a server on loopback at the usual ports of vLLM (8000), SGLang (30000), llama.cpp
(8080), Ollama (11434) and LM Studio (1234), say which answered and which model it serves,
then sweep a short closed loop (1, 2, 4 and 8 users by default, 256 tokens in, 64 out) and
answer in one sentence: how many users it serves with the first token within 500 ms and 20
tokens/s each (TTFT ≤ 500ms, TPOT ≤ 50ms) for 90% of requests, what limits it, and how sure.
About a minute; servebench sweep measures with the settings of your choice.`,
		Example: quickExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if per <= 0 || len(users) == 0 {
				return usageErr("--point-duration and --concurrency must be positive")
			}
			if url == "" {
				found, name, err := findServer(ctx, probes)
				if err != nil {
					return err
				}
				url = found
				t := client.Target{BaseURL: url, HTTP: client.NewHTTPClient(2, false)}
				fmt.Fprintf(std.stderr, "found a server at %s, the usual port of %s; it speaks %s\n", url, name, apis.Detect(ctx, t))
			}
			s := runspec.Default()
			s.Output = out
			s.URL, s.Model, s.InputTokens, s.OutputTokens, s.Duration = url, model, 256, 64, per
			s.SLO, s.ReadyTimeout = []string{"ttft=500ms", "tpot=50ms"}, 5*time.Second
			// a few hundred distinct prompts: enough that no point's requests repeat one (a
			// prefix cache would serve the repeat), few enough to build in a second
			s.NumPrompts = 256
			s.MarkSet("url", "input-tokens", "output-tokens", "duration", "slo", "num-prompts")
			if model != "" {
				s.MarkSet("model")
			}
			if err := s.Validate(); err != nil {
				return err
			}
			if s.Model == "" {
				t := client.Target{BaseURL: strings.TrimRight(url, "/"), HTTP: client.NewHTTPClient(2, false)}
				if ms, err := client.ListModels(ctx, t); err == nil && len(ms) > 0 {
					s.Model = ms[0]
				}
			}
			if s.Model != "" {
				fmt.Fprintf(std.stderr, "model %s; sweeping %v users, %s each\n", s.Model, users, per)
			}
			sc := sweep.Default()
			sc.Concurrency, sc.Target = users, "90%"
			res, err := sweep.Run(ctx, hardStop(ctx), s, &sc, benchOptions(std, &s))
			if res != nil {
				if perr := report.SweepTable(std.stdout, res.Header, res.Runs); err == nil {
					err = perr
				}
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&url, "url", "", "the server's base URL (default: the first that answers on the usual local ports)")
	fs.StringVar(&model, "model", "", "model name (default: the first the server lists)")
	fs.IntSliceVar(&users, "concurrency", []int{1, 2, 4, 8}, "users per point")
	fs.DurationVar(&per, "point-duration", 8*time.Second, "how long each point sends")
	fs.StringVarP(&out, "output", "o", "", "records file (default: servebench-<time>.jsonl)")
	fs.StringArrayVar(&probes, "probe", usualPorts, "`NAME=PORT` on loopback to look at, in order (repeatable; replaces the usual ports)")
	return cmd
}

// findServer is the first of probes (NAME=PORT) whose loopback port answers a readiness
// probe: its URL and name. None answering is a tool error that lists where it looked.
func findServer(ctx context.Context, probes []string) (url, name string, err error) {
	var looked []string
	for _, p := range probes {
		n, port, ok := strings.Cut(p, "=")
		if _, perr := strconv.Atoi(port); !ok || perr != nil {
			return "", "", usageErr("--probe %q: want NAME=PORT", p)
		}
		u := "http://127.0.0.1:" + port
		t := client.Target{BaseURL: u, HTTP: client.NewHTTPClient(2, false)}
		if client.WaitReady(ctx, t, 400*time.Millisecond) == nil {
			return u, n, nil
		}
		looked = append(looked, n+" "+port)
	}
	return "", "", codeErr(exitcode.Error, fmt.Errorf("no server answers on loopback at %s: start one, or give --url", strings.Join(looked, ", ")))
}
