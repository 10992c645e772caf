// Package simtest starts the built-in simulator for other packages' tests: one server on a free
// loopback port, closed when the test ends. (Package sim's own tests keep their helper: they
// cannot import this package, which imports sim.)
package simtest

import (
	"testing"

	"servebench/sim"
)

// Start starts a simulator configured by c on a free loopback port, closes it at the end of
// the test, and returns it with its base URL.
func Start(t testing.TB, c sim.Config) (*sim.Server, string) {
	t.Helper()
	s, err := sim.New(c)
	if err != nil {
		t.Fatal(err)
	}
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}
