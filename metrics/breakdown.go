package metrics

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"servebench/record"
)

// A breakdown is "the summary, grouped by KEY": one Accumulator per value of a per-request
// key (the LoRA adapter a request named, the load stage it was sent in, ...), each applying
// the run's own rules to its requests, so a group's figures are defined exactly as the run's
// are. A new per-request key is one RegisterKey call; every report format shows it (package
// report renders any Breakdown as one table).

// Key is a per-request key a run can be broken down by.
type Key struct {
	// Name is the key in the singular: the first column's head, and the group's key in JSON
	// ("adapter").
	Name string
	// Plural names the breakdown: its JSON key and its section ("adapters").
	Plural string
	// Title is a heading for people ("LoRA adapters"); Plural when empty.
	Title string
	// Note says what the table counts, for people.
	Note string
	// Of is the request's value of the key; false when the request has none (it then is in
	// no group). A run of which no request has a value has no breakdown by this key.
	Of func(h *record.Header, r *record.Record) (string, bool)
	// All, when set, lists the groups the header declares, in order, so that a group nothing
	// was sent in is shown empty rather than left out (a load stage with no request).
	All func(h *record.Header) []string
	// OwnWindow divides a group's throughputs by its own window (first sent → last done of
	// its requests): right for groups that follow one another (load stages). Otherwise they
	// divide by the run's window, which interleaved groups share (adapters), so that the
	// groups' throughputs add up to the run's.
	OwnWindow bool
}

// Breakdown is a run's summary grouped by one Key.
type Breakdown struct {
	Key    Key
	Groups []Group
}

// Group is one value of a breakdown's key and the summary of its requests.
type Group struct {
	Value string
	// Share is the group's share of the run's measured requests.
	Share   float64
	Summary *Summary
}

var (
	keysMu sync.Mutex
	keys   []Key
)

// RegisterKey adds a per-request key to every summary's breakdowns, after those registered
// before it. It is meant for init functions; a second key of the same name replaces the first.
func RegisterKey(k Key) {
	keysMu.Lock()
	defer keysMu.Unlock()
	for i := range keys {
		if keys[i].Name == k.Name {
			keys[i] = k
			return
		}
	}
	keys = append(keys, k)
}

// UnregisterKey removes the key called name (for tests that register a toy key).
func UnregisterKey(name string) {
	keysMu.Lock()
	defer keysMu.Unlock()
	keys = slices.DeleteFunc(keys, func(k Key) bool { return k.Name == name })
}

// Keys are the registered keys, in registration order.
func Keys() []Key {
	keysMu.Lock()
	defer keysMu.Unlock()
	return slices.Clone(keys)
}

// groupAcc keeps one Accumulator per value of each key, made on first use.
type groupAcc struct {
	sub  bool  // this Accumulator is itself a group's: it keeps no groups of its own
	keys []Key // the registered keys when the first record came: one lock per run, not per record
	by   map[string]map[string]*Accumulator
}

// addGroups adds r to the accumulator of each of its keys' values. Every record goes there
// (warmup and cooldown too), so each group's Accumulator applies the same rules as the run's.
func (a *Accumulator) addGroups(r *record.Record) {
	if a.groups.sub {
		return
	}
	if a.groups.keys == nil {
		a.groups.keys = append([]Key{}, Keys()...) // not nil, even when no key is registered
	}
	for _, k := range a.groups.keys {
		v, ok := k.Of(a.hdr, r)
		if !ok {
			continue
		}
		if a.groups.by == nil {
			a.groups.by = map[string]map[string]*Accumulator{}
		}
		m := a.groups.by[k.Name]
		if m == nil {
			m = map[string]*Accumulator{}
			a.groups.by[k.Name] = m
		}
		acc := m[v]
		if acc == nil {
			acc = NewAccumulator(a.opt)
			acc.groups.sub = true
			m[v] = acc
		}
		acc.Add(r)
	}
}

// breakdowns are the run's breakdowns, one per key that any request had, in key order.
func (a *Accumulator) breakdowns(run *Summary) []Breakdown {
	if a.groups.sub {
		return nil
	}
	var out []Breakdown
	for _, k := range a.groups.keys {
		m := a.groups.by[k.Name]
		if len(m) == 0 {
			continue
		}
		values := groupValues(m)
		if k.All != nil {
			values = k.All(a.hdr)
		}
		b := Breakdown{Key: k}
		for _, v := range values {
			acc := m[v]
			if acc == nil {
				acc = NewAccumulator(a.opt)
				acc.groups.sub = true
			}
			s := acc.Summary()
			if !k.OwnWindow {
				shareWindow(s, run)
			}
			g := Group{Value: v, Summary: s}
			if run.Measured > 0 {
				g.Share = float64(s.Measured) / float64(run.Measured)
			}
			b.Groups = append(b.Groups, g)
		}
		out = append(out, b)
	}
	return out
}

// shareWindow puts a group's throughputs over the run's window.
func shareWindow(s, run *Summary) {
	s.RequestThroughput, s.OutputThroughput, s.TotalTokenThroughput = nil, nil, nil
	if run.Window <= 0 {
		return
	}
	w := run.Window.Seconds()
	s.RequestThroughput = ptr(float64(s.Completed) / w)
	s.OutputThroughput = ptr(float64(s.OutputTokens) / w)
	s.TotalTokenThroughput = ptr(float64(s.InputTokens+s.OutputTokens) / w)
}

// groupValues are the values seen, in numeric order when every one is an integer, else in
// string order.
func groupValues(m map[string]*Accumulator) []string {
	vs := make([]string, 0, len(m))
	numeric := true
	for v := range m {
		vs = append(vs, v)
		if _, err := strconv.Atoi(v); err != nil {
			numeric = false
		}
	}
	if numeric {
		slices.SortFunc(vs, func(a, b string) int {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			return cmp.Compare(x, y)
		})
	} else {
		slices.Sort(vs)
	}
	return vs
}

// BreakdownBy returns the summary's breakdown by the key called name, or nil.
func (s *Summary) BreakdownBy(name string) *Breakdown {
	for i := range s.Breakdowns {
		if s.Breakdowns[i].Key.Name == name {
			return &s.Breakdowns[i]
		}
	}
	return nil
}
