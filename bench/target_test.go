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
