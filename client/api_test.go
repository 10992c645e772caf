package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRegistryValidate: the mistakes a new registry line can make are caught by the table's
// own test, not by a user who finds that --api picks the wrong backend.
func TestRegistryValidate(t *testing.T) {
	mk := func(t Target, o Options) (Backend, error) { return nil, nil }
	probe := &Probe{Path: "/x", Key: "x"}
	for _, tc := range []struct {
		r    Registry
		want string
	}{
		{Registry{{Name: "a", New: mk}, {Name: "b", Aliases: []string{"c"}, Probe: probe, New: mk}}, ""},
		{nil, "registry: no APIs"},
		{Registry{{Name: "a", Probe: probe, New: mk}}, "registry: the fallback a has a probe"},
		{Registry{{Name: "a", New: mk}, {Name: "b"}}, `registry: entry "b" needs a name and New`},
		{Registry{{Name: "a", New: mk}, {Name: "b", Aliases: []string{"a"}, New: mk}}, `registry: "a" names both a and b`},
		{Registry{{Name: "a", Aliases: []string{"auto"}, New: mk}}, `registry: "auto" names both auto and a`},
	} {
		got := ""
		if err := tc.r.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: error %q, want %q", strings.Join(tc.r.Names(), ","), got, tc.want)
		}
	}
}

// TestProbeWant: a probe with Want matches only that value of its key; without, any value.
func TestProbeWant(t *testing.T) {
	for body, want := range map[string][2]bool{ // [any value, Want "true"]
		`{"simulator": true}`: {true, true}, `{"simulator":false}`: {true, false},
		`{"simulator":null}`: {true, false}, `{"version":"1"}`: {false, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }))
		tg := Target{BaseURL: srv.URL, HTTP: srv.Client()}
		anyV := Probe{Path: "/version", Key: "simulator"}.Match(context.Background(), tg)
		isTrue := Probe{Path: "/version", Key: "simulator", Want: "true"}.Match(context.Background(), tg)
		if anyV != want[0] || isTrue != want[1] {
			t.Errorf("%s: match %v, with Want true %v; want %v", body, anyV, isTrue, want)
		}
		srv.Close()
	}
}
