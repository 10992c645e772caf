package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"servebench/bench"
	"servebench/client"
	"servebench/conditions"
	"servebench/report"
	"servebench/runspec"
)

const envExamples = `  servebench env                                        # this machine only
  servebench env --url http://127.0.0.1:8000            # what servebench can see of the server
  servebench env --url http://gpu-box:8000 --condition gpu.name="NVIDIA L4" --format json`

func newEnvCmd(st *streams) *cobra.Command {
	var c bench.Env
	var format string
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Show the conditions servebench detects: server, model, batching, GPU, client machine",
		Long: `Show every condition that must stay fixed between a baseline and a later run, with its
value and its source: detected (asked of the server or this machine), declared (--condition,
--conditions) or unknown. run records the same set in every records file's header.`,
		Example: envExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usageErr("--format %q: want text or json", format)
			}
			if base, dropped := client.APIBase(c.URL); dropped != "" {
				fmt.Fprintf(st.stderr, "--url: asking the server at %s: the URL's %s is left out\n", runspec.RedactURL(base), dropped)
			}
			cs, err := bench.Conditions(cmd.Context(), c, Version)
			if err != nil {
				return err
			}
			return writeConditions(st.stdout, format, cs)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.URL, "url", "", "server base URL (default: none, this machine only)")
	f.StringVar(&c.Model, "model", "", "the model whose settings to read, on a server that serves several (default: the first it lists)")
	f.StringVar(&c.APIKey, "api-key", "", "API key sent as a Bearer token (default $OPENAI_API_KEY)")
	f.StringArrayVar(&c.Headers, "header", nil, "extra request header `K=V` (repeatable)")
	f.BoolVar(&c.Insecure, "insecure", false, "skip TLS certificate verification")
	f.DurationVar(&c.ReadyTimeout, "ready-timeout", 10*time.Second, "how long to wait for the server to answer")
	f.StringArrayVar(&c.Declared, "condition", nil, "declare a condition `key=value` (repeatable)")
	f.StringVar(&c.ConditionsFile, "conditions", "", "YAML file of declared conditions")
	f.StringVar(&format, "format", "text", "text | json")
	return cmd
}

func writeConditions(w io.Writer, format string, cs conditions.Set) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cs)
	}
	return report.Conditions(w, cs)
}
