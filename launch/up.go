package launch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ReadyFunc waits until the server at url answers, or ctx ends (the server exited, or the
// user stopped servebench): client.WaitReady with the run's --ready-timeout.
type ReadyFunc func(ctx context.Context, url string) error

// Server is a started server that answered: its process, its URL and how long it took.
type Server struct {
	*Process
	URL   string
	Ready time.Duration // from the start to the first ready answer
}

// Failure is a configuration that did not serve: its stage ("start": it could not be
// started or exited before it was ready; "ready": it never answered; "run": it died during
// the run), what happened, and the last lines of its log.
type Failure struct {
	Stage string
	What  string
	Log   string // path of its log file
	Tail  string
}

func (f *Failure) Error() string {
	msg := fmt.Sprintf("server %s: %s", map[string]string{"start": "did not start", "ready": "never became ready", "run": "died during the run"}[f.Stage], f.What)
	if f.Tail != "" {
		return msg + "; its log " + f.Log + " ends:\n" + f.Tail
	}
	return msg + "; its log " + f.Log + " is empty"
}

// Up starts command line cmd (with env, {port} replaced by a free port) with its output in
// logPath, and waits with ready until it answers at url (when url is "", at
// http://127.0.0.1:{port}). A command that cannot start, exits or never answers is a
// *Failure, and no process is left behind; so is one stopped by ctx, which returns ctx's
// error.
func Up(ctx context.Context, cmd string, env []string, url, logPath string, grace time.Duration, ready ReadyFunc) (*Server, error) {
	port := 0
	if strings.Contains(cmd, PortWord) {
		var err error
		if port, err = FreePort(); err != nil {
			return nil, err
		}
		url = fmt.Sprintf("http://127.0.0.1:%d", port)
	}
	argv, err := Argv(cmd, port)
	if err != nil {
		return nil, err
	}
	p, err := Start(argv, env, logPath)
	if err != nil {
		return nil, &Failure{Stage: "start", What: err.Error(), Log: logPath}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.Done():
			cancel() // an exited server will never answer: stop waiting at once
		case <-rctx.Done():
		}
	}()
	err = ready(rctx, url)
	took := time.Since(p.Started)
	if ex := p.Exited(); ex != "" {
		return nil, &Failure{Stage: "start", What: ex + " before it was ready", Log: logPath, Tail: p.Tail(12)}
	}
	if err != nil {
		p.Stop(grace)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Failure{Stage: "ready", What: err.Error(), Log: logPath, Tail: p.Tail(12)}
	}
	return &Server{Process: p, URL: url, Ready: took}, nil
}

// AsFailure returns err's *Failure, or nil.
func AsFailure(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return nil
}
