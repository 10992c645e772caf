package bench

import (
	"errors"
	"time"

	"servebench/client"
	"servebench/client/apis"
	"servebench/runspec"
)

// newBackend returns the backend for api on target t, from the one table of APIs.
func newBackend(t client.Target, api, model string, idle time.Duration, batch int) (client.Backend, error) {
	be, err := apis.New(t, api, client.Options{Model: model, IdleTimeout: idle, Batch: batch})
	if errors.Is(err, client.ErrUnknownAPI) || errors.Is(err, client.ErrModelRequired) {
		return nil, runspec.Usage(err)
	}
	return be, err
}

func needsModel(api string) bool {
	a, ok := apis.Lookup(api)
	return ok && a.NeedsModel
}
