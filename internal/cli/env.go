package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"servebench/client"
	"servebench/conditions"
	"servebench/conditions/capture"
	"servebench/report"
	"servebench/runspec"
)

const envExamples = `  servebench env                                        # this machine only
  servebench env --url http://127.0.0.1:8000            # what servebench can see of the server
  servebench env --url http://gpu-box:8000 --condition gpu.name="NVIDIA L4" --format json`

// envConfig is the configuration of `servebench env`.
type envConfig struct {
	url, apiKey, format, file string
	model                     string
	headers, declared         []string
	insecure                  bool
	readyTimeout              time.Duration
}

func newEnvCmd(st *streams) *cobra.Command {
	var c envConfig
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Show the conditions servebench detects: server, model, batching, GPU, client machine",
		Long: `Show every condition that must stay fixed between a baseline and a later run, with its
value and its source: detected (asked of the server or this machine), declared (--condition,
--conditions) or unknown. run records the same set in every records file's header.`,
		Example: envExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.format != "text" && c.format != "json" {
				return usageErr("--format %q: want text or json", c.format)
			}
			cs, err := envConditions(cmd.Context(), &c)
			if err != nil {
				return err
			}
			return writeConditions(st.stdout, c.format, cs)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.url, "url", "", "server base URL (default: none, this machine only)")
	f.StringVar(&c.model, "model", "", "the model whose settings to read, on a server that serves several (default: the first it lists)")
	f.StringVar(&c.apiKey, "api-key", "", "API key sent as a Bearer token (default $OPENAI_API_KEY)")
	f.StringArrayVar(&c.headers, "header", nil, "extra request header `K=V` (repeatable)")
	f.BoolVar(&c.insecure, "insecure", false, "skip TLS certificate verification")
	f.DurationVar(&c.readyTimeout, "ready-timeout", 10*time.Second, "how long to wait for the server to answer")
	f.StringArrayVar(&c.declared, "condition", nil, "declare a condition `key=value` (repeatable)")
	f.StringVar(&c.file, "conditions", "", "YAML file of declared conditions")
	f.StringVar(&c.format, "format", "text", "text | json")
	return cmd
}

// envConditions detects and merges the conditions as run would record them (without the
// workload and load, which only a run has).
func envConditions(ctx context.Context, c *envConfig) (conditions.Set, error) {
	declared, err := (&runspec.Spec{Conditions: c.declared, ConditionsFile: c.file}).Declared()
	if err != nil {
		return nil, err
	}
	var detected conditions.Set
	if c.url != "" {
		key := c.apiKey
		if key == "" {
			key = os.Getenv("OPENAI_API_KEY")
		}
		hdr, err := runspec.ParseHeaders(c.headers)
		if err != nil {
			return nil, err
		}
		t := client.Target{BaseURL: strings.TrimRight(c.url, "/"), APIKey: key, Header: hdr, HTTP: client.NewHTTPClient(4, c.insecure)}
		// a server that is not there is an error, not a table of unknowns
		if err := client.WaitReady(ctx, t, c.readyTimeout); err != nil {
			return nil, errors.New(runspec.RedactSecrets(err.Error(), key))
		}
		detected = capture.Detect(ctx, t, c.model)
	}
	return conditions.Complete(conditions.Merge(capture.Host(Version), detected, declared)), nil
}

func writeConditions(w io.Writer, format string, cs conditions.Set) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cs)
	}
	return report.Conditions(w, cs)
}
