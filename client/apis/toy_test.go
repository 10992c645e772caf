package apis

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

// This file is what adding a backend takes: the backend itself (here a toy that POSTs to
// /toy and reads NDJSON objects {"text":..,"end":..}) and one registry line (withToy). The
// test drives it through the registry's Lookup, Detect and New, as the CLI would.

// toyNew is the toy backend's constructor, the one function a backend package exports.
func toyNew(t client.Target) (*client.EventBackend, error) {
	if err := t.CheckURL("toy"); err != nil {
		return nil, err
	}
	return &client.EventBackend{Target: t, Path: "/toy", Accept: "application/x-ndjson",
		Body: func(req *client.Request) ([]byte, error) {
			return client.EncodeBody("toy", req, map[string]any{"text": client.PromptText(req), "n": req.OutputTokens})
		},
		Frames:  client.NDJSONFrames,
		Decoder: func() client.EventDecoder { return &toyDecoder{} }}, nil
}

// toyDecoder decodes one toy object per line.
type toyDecoder struct{ end bool }

// Event implements client.EventDecoder.
func (d *toyDecoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	var ev struct {
		Text string `json:"text"`
		End  bool   `json:"end"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, client.DecodeError(0, err, data)
	}
	if ev.Text != "" {
		o.Content(1)
	}
	d.end = ev.End
	return ev.End, nil
}

// Finished implements client.EventDecoder.
func (d *toyDecoder) Finished() bool { return d.end }

// withToy is the registry with the toy's one line added.
var withToy = append(Table(), client.API{Name: "toy", Aliases: []string{"toy-llm"}, Probe: &client.Probe{Path: "/toy/version", Key: "toy"},
	New: func(t client.Target, o client.Options) (client.Backend, error) { return o.Native(toyNew(t)) }})

func TestToyBackend(t *testing.T) {
	if err := withToy.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(withToy.Names(), " "); !strings.HasSuffix(got, " rerank toy auto") {
		t.Errorf("names %s", got)
	}
	if _, ok := Lookup("toy"); ok {
		t.Fatal("the toy leaked into the real table")
	}
	seen := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/toy/version":
			w.Write([]byte(`{"toy":"1.0"}`))
		case "/toy":
			var m map[string]any
			_ = json.NewDecoder(r.Body).Decode(&m)
			seen <- r.Method + " " + m["text"].(string)
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Write([]byte("{\"text\":\"a\"}\n{\"text\":\"b\"}\n{\"end\":true}\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tg := client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClient(2, false)}

	name := withToy.Detect(context.Background(), tg)
	if a, ok := withToy.Lookup("toy-llm"); name != "toy" || !ok || a.Name != "toy" {
		t.Fatalf("Detect = %q, Lookup(toy-llm) = %q, %v", name, a.Name, ok)
	}
	b, err := withToy.New(tg, "toy-llm", client.Options{IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if eb := b.(*client.EventBackend); eb.IdleTimeout != time.Minute {
		t.Errorf("idle timeout %v", eb.IdleTimeout)
	}
	var rec clienttest.Recorder
	req := &client.Request{Request: &workload.Request{ID: 1, Prompt: "hi", OutputTokens: 2}}
	if err := b.Do(context.Background(), req, &rec); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "POST hi" {
		t.Errorf("server saw %q", got)
	}
	const want = "dispatch|headers 200|event content 1 ×2|event done"
	if got := strings.Join(rec.Events(), "|"); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}
