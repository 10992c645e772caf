package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Auto is the API name that asks Detect for the family instead of naming one. It is listed
// by Registry.Names (it is a value users type) but is no entry: nothing can be built from it.
const Auto = "auto"

// ErrUnknownAPI is wrapped by the error for an API name that is neither a name nor an alias
// in the registry; the message lists the valid names.
var ErrUnknownAPI = errors.New("unknown API")

// ErrModelRequired is wrapped by the error of Registry.New for an API that addresses the
// model in its URL (API.NeedsModel) when no model was given.
var ErrModelRequired = errors.New("a model name is required (the API addresses the model in its URL and lists no models)")

// API is one entry of the registry of API backends: what users call it, how to recognise a
// server that speaks it, how to build its Backend, and what that backend can tell us.
type API struct {
	Name    string   // the canonical name (the value recorded in headers)
	Aliases []string // other names accepted for it; each names one API only
	Chat    bool     // it sends chat messages, so the workload is built as chat
	// Probe recognises a server of this family for --api auto; nil for an API that no
	// endpoint tells apart (the OpenAI-compatible ones, which every server speaks).
	Probe *Probe
	// NeedsModel: the API addresses the model in its URL and the server lists none (Triton),
	// so Registry.New refuses an empty Options.Model.
	NeedsModel bool
	Reports    Reports
	// New builds the backend on target t; it must apply every field of opt that it can.
	New func(t Target, opt Options) (Backend, error)
}

// Reports is what a backend can tell about a request beyond the stream's timing. A field is
// true when the backend asks for it and decodes it; a particular server may still omit it.
type Reports struct {
	Usage   bool // the server's token counts (Observer.Usage); without them output tokens are counted per event
	Figures bool // the server's own figures (Observer.Server), e.g. llama.cpp timings
	// NoTokenizer: servers of this family have no /tokenize endpoint, so asking is pointless
	// and prompt lengths are approximate without a local tokenizer. False means "ask".
	NoTokenizer bool
}

// Options are the settings a backend is built with.
type Options struct {
	Model       string        // the model name, for APIs that address it in the URL
	IdleTimeout time.Duration // abort a stream silent for this long, as class timeout; 0: never
	Batch       int           // inputs (embeddings) or documents (rerank) per request; 0: the API's default
}

// Native returns b with opt applied, or err: it takes a native constructor's two results
// whole, as in o.Native(triton.New(t, o.Model)), so a registry entry stays one line. It never returns a
// non-nil Backend holding a nil pointer.
func (o Options) Native(b *EventBackend, err error) (Backend, error) {
	if err != nil {
		return nil, err
	}
	b.IdleTimeout = o.IdleTimeout
	return b, nil
}

// Probe is one discovery request: GET Path answering 200 with a JSON object that holds Key
// identifies the family (an endpoint and key no other server family serves).
type Probe struct {
	Path string // from the server root, e.g. "/api/version"
	Key  string // a top-level key of the answer, e.g. "version"
	// Want, when set, is the JSON value Key must hold (e.g. "true"); empty: any value.
	Want string
}

// probeTimeout bounds each discovery request: a server that does not answer a path in 2 s
// does not have it in any useful sense, and --api auto must not slow a run down much.
const probeTimeout = 2 * time.Second

// Match reports whether the server at t answers p. It never fails: a probe that errors is
// simply not a match.
func (p Probe) Match(ctx context.Context, t Target) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := t.NewRequest(ctx, http.MethodGet, p.Path, nil)
	if err != nil {
		return false
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var m map[string]json.RawMessage
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&m) != nil {
		return false
	}
	v, ok := m[p.Key]
	return ok && (p.Want == "" || string(v) == p.Want)
}

// Registry is the table of API backends, in the order help lists them. The same order is
// the order Detect tries the probes in, and the first entry is what Detect falls back to, so
// it must be an API every server speaks. Package client/apis holds the one table servebench
// uses; Registry is here so that the table's behaviour needs no backend package.
type Registry []API

// Names returns the canonical names in table order, then Auto.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r)+1)
	for _, a := range r {
		names = append(names, a.Name)
	}
	return append(names, Auto)
}

// Lookup returns the entry named name, or the one with name as an alias (Validate makes
// sure there is at most one). Auto is not an entry: resolve it with Detect first.
func (r Registry) Lookup(name string) (API, bool) {
	for _, a := range r {
		if a.Name == name || slices.Contains(a.Aliases, name) {
			return a, true
		}
	}
	return API{}, false
}

// Canonical returns the canonical name of name (itself for a name, the entry's name for an
// alias, Auto for Auto), or an error wrapping ErrUnknownAPI that lists the valid names.
func (r Registry) Canonical(name string) (string, error) {
	if name == Auto {
		return Auto, nil
	}
	a, ok := r.Lookup(name)
	if !ok {
		return "", r.unknown(name)
	}
	return a.Name, nil
}

func (r Registry) unknown(name string) error {
	return fmt.Errorf("%w %q: want one of %s", ErrUnknownAPI, name, strings.Join(r.Names(), ", "))
}

// IsChat reports whether the API name (or alias) sends chat messages.
func (r Registry) IsChat(name string) bool {
	a, ok := r.Lookup(name)
	return ok && a.Chat
}

// New builds the backend of the API name (or alias) on target t with opt. An unknown name
// (Auto included: Detect resolves it) is an error wrapping ErrUnknownAPI; an API that needs a
// model and has none, one wrapping ErrModelRequired.
func (r Registry) New(t Target, name string, opt Options) (Backend, error) {
	a, ok := r.Lookup(name)
	switch {
	case name == Auto:
		return nil, fmt.Errorf("api %s: find the family with Detect before building a backend", Auto)
	case !ok:
		return nil, r.unknown(name)
	case a.NeedsModel && opt.Model == "":
		return nil, fmt.Errorf("%s: %w", a.Name, ErrModelRequired)
	}
	return a.New(t, opt)
}

// Detect returns the name of the first API whose probe the server at t answers, trying them
// in table order, one after another, each bounded by two seconds; when none matches, the
// first entry's name ("" for an empty table). It never fails.
func (r Registry) Detect(ctx context.Context, t Target) string {
	for _, a := range r {
		if a.Probe != nil && a.Probe.Match(ctx, t) {
			return a.Name
		}
	}
	if len(r) == 0 {
		return ""
	}
	return r[0].Name
}

// Validate checks the table: every entry has a name and a constructor, no name or alias is
// used twice or is Auto, and the fallback (the first entry) has no probe, since a family
// that must be recognised cannot also be what is assumed when nothing is.
func (r Registry) Validate() error {
	if len(r) == 0 {
		return errors.New("registry: no APIs")
	}
	if r[0].Probe != nil {
		return fmt.Errorf("registry: the fallback %s has a probe", r[0].Name)
	}
	seen := map[string]string{Auto: Auto}
	for _, a := range r {
		if a.Name == "" || a.New == nil {
			return fmt.Errorf("registry: entry %q needs a name and New", a.Name)
		}
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			if prev, dup := seen[n]; dup {
				return fmt.Errorf("registry: %q names both %s and %s", n, prev, a.Name)
			}
			seen[n] = a.Name
		}
	}
	return nil
}
