package bench

import (
	"testing"

	"servebench/client/apis"
)

// TestEndpointAPINames: the --api a pasted endpoint path is attributed to is one of --api's
// canonical names, so that the line that names it gives a value the flag takes.
func TestEndpointAPINames(t *testing.T) {
	for path, api := range endpointAPI {
		if got, err := apis.Canonical(api); err != nil || got != api {
			t.Errorf("%s: --api %s is not a canonical name (%q, %v)", path, api, got, err)
		}
	}
}

// TestLengthsNote: the "built N prompts" line says what made lengths approximate: no
// tokenizer, or prompts the named tokenizer could not build to their length.
func TestLengthsNote(t *testing.T) {
	none, tok := &Session{}, &Session{tokName: "server:/tokenize"}
	for _, c := range []struct {
		got, want string
	}{
		{none.lengthsNote(true, 0, 5), "exact"},
		{none.lengthsNote(false, 0, 5), "approximate: no tokenizer"},
		{tok.lengthsNote(false, 2, 5), "approximate: 2 of 5 prompts could not be built to their length with server:/tokenize"},
		{tok.lengthsNote(false, 0, 5), "approximate: some prompts could not be built to their length with server:/tokenize"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
