// Package capture asks a server and this machine what the conditions of a run are: the
// server's family, model and settings over HTTP, this machine's GPUs through nvidia-smi, and the
// client host. It is the only part of conditions that does I/O; what the answers mean is
// declared, and parsed, by the pure package conditions.
package capture

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/url"
	"sync"
	"time"

	"servebench/client"
	"servebench/conditions"
)

// ProbeTimeout bounds each discovery request. Discovery must never slow a run down much, and
// a server that does not answer a path in 2 s does not have it in any useful sense.
const ProbeTimeout = 2 * time.Second

// Detect asks the server at t what it is and what the settings of model, the model under test
// ("" when none was named), are, cheaply and tolerantly: every family's declared probes in
// parallel with ProbeTimeout each, then the follow-ups the first answers call for, then each
// family's parser on the answers. Load-state figures come back as observations
// (conditions.ObservedPrefix keys; conditions.SplitObserved separates them). GPU facts come from nvidia-smi when the server runs
// on this machine (a loopback URL) and the target is not the simulator; where the server
// runs (its GPUs' UUIDs, or cpu) whenever it is on this machine and nvidia-smi answers. A server that answers
// nothing gives an empty set, never an error.
func Detect(ctx context.Context, t client.Target, model string) conditions.Set {
	a := ask(ctx, t, conditions.Probes())
	maps.Copy(a, ask(ctx, t, conditions.FollowUps(a, model)))
	s := conditions.FromAnswers(a, model)
	if !IsLoopback(t.Base()) {
		return s
	}
	if s.Value(conditions.ServerFamily) != conditions.SimFamily {
		for _, c := range GPU(ctx) {
			s.Put(c)
		}
	}
	// the simulator too: it runs on the CPU, and a GPU's energy is not its tokens'
	for _, c := range Placement(ctx, t.Base()) {
		s.Put(c)
	}
	return s
}

// ask sends every probe to t concurrently and collects the 2xx answers by path; the others
// are left out (see conditions.Answers).
func ask(ctx context.Context, t client.Target, probes []conditions.Probe) conditions.Answers {
	out := make(conditions.Answers, len(probes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Go(func() {
			body, ok := send(ctx, t, p)
			if !ok {
				return
			}
			mu.Lock()
			out[p.Path] = body
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// send sends one probe with ProbeTimeout and returns a 2xx answer's body (at most 4 MiB).
func send(ctx context.Context, t client.Target, p conditions.Probe) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	var rd io.Reader
	if p.Body != nil {
		rd = bytes.NewReader(p.Body)
	}
	req, err := t.NewRequest(ctx, p.Method, p.Path, rd)
	if err != nil {
		return nil, false
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return b, err == nil && resp.StatusCode/100 == 2
}

// IsLoopback reports whether the URL's host is this machine (localhost or a loopback IP): only
// then do this machine's GPUs describe the server.
func IsLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
