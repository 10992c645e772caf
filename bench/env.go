package bench

import (
	"context"
	"errors"
	"os"
	"time"

	"servebench/client"
	"servebench/conditions"
	"servebench/conditions/capture"
	"servebench/runspec"
)

// Env is what `servebench env` asks about: this machine, a server when URL is set, and the
// conditions the user declares.
type Env struct {
	URL, APIKey, Model string // APIKey "": $OPENAI_API_KEY
	Headers            []string
	Insecure           bool
	ReadyTimeout       time.Duration
	Declared           []string // key=value
	ConditionsFile     string   // YAML of declared conditions
}

// Conditions detects and merges the conditions as a run would record them (without the
// workload and load, which only a run has); version is servebench's, a host condition.
func Conditions(ctx context.Context, e Env, version string) (conditions.Set, error) {
	declared, err := (&runspec.Spec{Conditions: e.Declared, ConditionsFile: e.ConditionsFile}).Declared()
	if err != nil {
		return nil, err
	}
	var detected conditions.Set
	if e.URL != "" {
		key := e.APIKey
		if key == "" {
			key = os.Getenv("OPENAI_API_KEY")
		}
		hdr, err := runspec.ParseHeaders(e.Headers)
		if err != nil {
			return nil, err
		}
		base, _ := client.APIBase(e.URL) // env's table names the URL it asked
		t := client.Target{BaseURL: base, APIKey: key, Header: hdr, HTTP: client.NewHTTPClient(4, e.Insecure)}
		// a server that is not there is an error, not a table of unknowns
		if err := client.WaitReady(ctx, t, e.ReadyTimeout); err != nil {
			var ns *client.NotServedError
			if errors.As(err, &ns) {
				return nil, runspec.Usagef("--url: %s", runspec.RedactSecrets(err.Error(), key)) // a wrong URL, as run says
			}
			return nil, errors.New(runspec.RedactSecrets(err.Error(), key))
		}
		detected = capture.Detect(ctx, t, e.Model)
	}
	return conditions.Complete(conditions.Merge(capture.Host(version), detected, declared)), nil
}
