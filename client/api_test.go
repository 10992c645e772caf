package client

import (
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
