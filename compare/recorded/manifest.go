package recorded

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestName is the manifest's file name in a stored sets' folder.
const ManifestName = "manifest.json"

// Labels of a set.
const (
	// Design: recorded while the policy's rules were chosen (or judged with rules changed
	// since), so its rates are not an independent test of them.
	Design = "design"
	// HeldOut: recorded after the last change of the rules, with new seeds or a new session,
	// and judged only with them.
	HeldOut = "held-out"
	// HeldOutEarlier: held out under an earlier policy whose rules have changed since (the set's
	// Recorded says which): no longer an independent test of the rules, and reported apart
	// from the design sets, whose goals are asserted, since it was not chosen to meet them.
	HeldOutEarlier = "held-out earlier"
)

// Classes: what a pair is by construction, and so what a right verdict is.
const (
	AA       = "A/A"          // the same server on both sides: "no significant change"
	AB10     = "A/B +10% ITL" // a slower decode: regressed
	AB2x     = "A/B ×2 ITL"   // twice as slow a decode: regressed
	Throttle = "throttle"     // the candidate's server slows ×1.5 midway: candidate not steady
	Cold     = "cold start"   // the candidate's server starts cold: candidate not steady
	Overload = "overload"     // the candidate's open loop at 130% of capacity: unbounded queueing
	// LlamaAB: a real llama.cpp server on both sides, the candidate's restarted with a
	// known slower setting (the set's command names it): caught
	LlamaAB = "A/B llama.cpp"
)

// Manifest describes the stored sets.
type Manifest struct {
	Sets []Set `json:"sets"`
}

// Set is one recorded set: pairs of stored files of one class.
type Set struct {
	// Name is the set's short name (aa3, aa1, ab10, ab2x, throttle, cold, overload,
	// llama-aa3, llama-ab, with a suffix for later sets).
	Name  string `json:"name"`
	Class string `json:"class"`
	// Runs is the runs a side.
	Runs  int    `json:"runs"`
	Label string `json:"label"` // Design, HeldOut or HeldOutEarlier
	// Recorded is when (UTC), Commit the servebench commit that recorded it, Command how
	// (scripts/validate-compare and its environment), Load the machine's 1-minute load
	// average before and after each side of the set (lowest to highest): the machine was
	// shared with other engineers' builds and tests, the "busy machine" of the rates.
	Recorded string `json:"recorded"`
	Commit   string `json:"commit"`
	Command  string `json:"command"`
	Load     string `json:"load"`
	// Expect are the conditions named with --expect-change when the pairs are compared.
	Expect []string `json:"expect,omitempty"`
	// Pairs are the base and candidate files, relative to the manifest's folder.
	Pairs [][2]string `json:"pairs"`
}

// ReadManifest reads dir's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return &m, nil
}
