package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"servebench/client"
	"servebench/conditions"
	"servebench/launch"
	"servebench/record"
	"servebench/runspec"
)

// ReadyKey is the observation of how long a server that servebench started took to answer.
const ReadyKey = conditions.ObservedPrefix + "launch.ready_s"

// StartServer starts s.ServerCmd with s.ServerEnv (package launch), its output in logPath,
// waits until it answers within s.ReadyTimeout, and points s.URL at it. The caller stops the
// returned server. A server that did not come up is a *launch.Failure.
func StartServer(ctx context.Context, s *runspec.Spec, logPath string, grace time.Duration) (*launch.Server, error) {
	hdr, err := runspec.ParseHeaders(s.Headers)
	if err != nil {
		return nil, err
	}
	ready := func(ctx context.Context, url string) error {
		t := client.Target{BaseURL: strings.TrimRight(url, "/"), APIKey: s.APIKey, Header: hdr, HTTP: client.NewHTTPClient(4, s.Insecure)}
		if err := client.WaitReady(ctx, t, s.ReadyTimeout); err != nil {
			return fmt.Errorf("%s (--ready-timeout %gs)", s.Redact(err.Error()), s.ReadyTimeout.Seconds())
		}
		return nil
	}
	srv, err := launch.Up(ctx, s.ServerCmd, s.ServerEnv, s.URL, logPath, grace, ready)
	if err != nil {
		return nil, err
	}
	s.URL = srv.URL
	return srv, nil
}

// ReadyObserved is the observation of server srv's time to ready, for Options.Observed.
func ReadyObserved(srv *launch.Server) record.Condition {
	return record.Condition{Key: ReadyKey, Value: fmt.Sprintf("%.2f", srv.Ready.Seconds()), Source: conditions.Detected}
}
