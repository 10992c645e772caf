package conditions

import (
	"encoding/json"
	"slices"

	"servebench/record"
)

// Probe is one request that a family's discovery needs answered. Its Path is also the key of
// its answer in Answers, so no two probes share a path.
type Probe struct {
	Method string // "GET" or "POST"
	Path   string // e.g. /v1/models
	Body   []byte // a JSON body, or nil
}

// Answers are what a server said to the probes, by probe path. Only a 2xx answer whose body
// was read is present: a 404, a timeout or a refused connection is absence, which the parsers
// read as "not this family" or "not stated", never as an error.
type Answers map[string][]byte

// json decodes the answer to path into v, reporting whether there was one and it decoded.
func (a Answers) json(path string, v any) bool {
	b, ok := a[path]
	return ok && json.Unmarshal(b, v) == nil
}

// has reports whether path was answered.
func (a Answers) has(path string) bool {
	_, ok := a[path]
	return ok
}

// Family declares one server family's discovery as data: the probes it must have answered,
// optional follow-up probes computed from those answers, and a pure function from the answers
// to conditions. capture runs the probes; nothing here does I/O, so a family is tested by
// feeding it recorded answers.
//
// Both functions are told the model under test (run's --model; "" when none was named): a
// server that serves several models is asked about that one, never about whichever it lists
// or has loaded first. And they read settings, not load state: what the server happens to
// hold in memory when asked goes under ObservedPrefix, an observation of the run that never
// makes two runs not comparable (see SplitObserved).
type Family struct {
	// Name says which server the family reads ("openai" for the generic /v1/models one).
	Name string
	// Probes are asked first, all at once, together with every other family's.
	Probes []Probe
	// FollowUp, when set, gives the probes that can only be phrased after the first round
	// (Ollama's /api/show needs the model name). It returns nil when it needs nothing more.
	FollowUp func(a Answers, model string) []Probe
	// Parse turns the answers to this family's probes into conditions; nothing when they are
	// not its family's. It sees only the paths the family declared.
	Parse func(a Answers, model string) []record.Condition
	// Derived declares the conditions of this family's servers that follow from one setting
	// (expect.go): --expect-change naming the setting expects them all.
	Derived []Derivation
}

// families are run in order: the generic OpenAI /v1/models parser first, then the family
// parsers, which refine what it found (a later value for a key replaces an earlier one).
var families = []Family{
	{Name: "openai", Probes: gets("/v1/models"), Parse: openAIModels},
	{Name: SimFamily, Probes: gets("/version"), Parse: one(simulator)},
	// vLLM has no family endpoint of its own: /metrics (vllm:* gauges) or /v1/models
	// (owned_by) say it is vLLM, and /version is asked to rule out the simulator.
	{Name: VLLM, Probes: gets("/version", "/metrics", "/v1/models"), Parse: one(vllm), Derived: vllmDerived},
	// SGLang renamed /get_server_info to /server_info; both are asked.
	{Name: SGLang, Probes: gets("/get_server_info", "/server_info", "/get_model_info"), Parse: one(sglang)},
	{Name: TGI, Probes: gets("/info"), Parse: one(tgi)},
	{Name: LlamaCpp, Probes: gets("/props", "/slots", "/metrics"), Parse: one(llamaCpp), Derived: llamaCppDerived},
	// Ollama serves every model it has pulled: /api/show is asked for the model under test, and
	// /api/ps (what is loaded now) is only observed.
	{Name: Ollama, Probes: gets("/api/version", "/api/ps", "/v1/models"), FollowUp: ollamaFollowUp,
		Parse: func(a Answers, model string) []record.Condition {
			return append(ollama(a, model), ollamaShow(a)...)
		}},
}

// one adapts the parser of a family whose server serves one model: there is no model to
// choose, so the model under test does not change what it reads.
func one(parse func(Answers) []record.Condition) func(Answers, string) []record.Condition {
	return func(a Answers, _ string) []record.Condition { return parse(a) }
}

// The methods a probe uses, spelled out so that this package needs no net/http.
const (
	methodGet  = "GET"
	methodPost = "POST"
)

// gets declares GET probes of the paths.
func gets(paths ...string) []Probe {
	out := make([]Probe, len(paths))
	for i, p := range paths {
		out[i] = Probe{Method: methodGet, Path: p}
	}
	return out
}

// Families returns the declared server families, in the order their parsers run.
func Families() []Family { return slices.Clone(families) }

// Probes lists every family's first-round probes once each, in declaration order.
func Probes() []Probe {
	var out []Probe
	for _, f := range families {
		out = addProbes(out, f.Probes)
	}
	return out
}

// FollowUps lists the probes the families ask for after seeing the first round's answers a,
// about the model under test, once each and none already in the first round. There is one
// follow-up round only: it is enough for every family we know, and a longer chain would make
// discovery slow.
func FollowUps(a Answers, model string) []Probe {
	first := Probes()
	var out []Probe
	for _, f := range families {
		if f.FollowUp == nil {
			continue
		}
		for _, p := range f.FollowUp(a, model) {
			if !slices.ContainsFunc(first, func(q Probe) bool { return q.Path == p.Path }) {
				out = addProbes(out, []Probe{p})
			}
		}
	}
	return out
}

// addProbes appends the probes whose path is not in list yet.
func addProbes(list, ps []Probe) []Probe {
	for _, p := range ps {
		if !slices.ContainsFunc(list, func(q Probe) bool { return q.Path == p.Path }) {
			list = append(list, p)
		}
	}
	return list
}

// FromAnswers runs every family's parser on the answers to its own declared probes (first
// round and follow-up) about the model under test, and merges the results in family order.
// Recorded answers give the same set as a live server, because this is all that discovery does
// once the answers are in.
func FromAnswers(a Answers, model string) Set {
	var s Set
	for _, f := range families {
		for _, c := range f.Parse(a.only(f, model), model) {
			s.Put(c)
		}
	}
	return s
}

// only restricts a to the paths family f declared, so that a parser reading an undeclared
// path sees nothing and its test fails, instead of depending on another family's probe.
func (a Answers) only(f Family, model string) Answers {
	ps := f.Probes
	if f.FollowUp != nil {
		ps = append(slices.Clip(ps), f.FollowUp(a, model)...)
	}
	out := make(Answers, len(ps))
	for _, p := range ps {
		if b, ok := a[p.Path]; ok {
			out[p.Path] = b
		}
	}
	return out
}
