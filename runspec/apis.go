package runspec

import (
	"slices"

	"servebench/client/apis"
)

// APINames are the values of --api, in the order the help lists them.
func APINames() []string { return apis.Names() }

func knownAPI(name string) bool {
	_, err := apis.Canonical(name)
	return err == nil || slices.Contains(apis.Names(), name)
}
