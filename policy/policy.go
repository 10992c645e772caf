// Package policy holds the shape of a verdict policy: an ordered list of rules, each with the
// condition it tests, the figures it reads, its effect and its named constants, and the trace
// (Steps) a verdict carries. compare's policy (compare.DefaultPolicy) and the steady-state
// check's (metrics.SteadyPolicy) are values of these types, and internal/policydoc writes
// their decision tables from them. This package imports nothing of the project's.
package policy

// Policy is an ordered list of rules.
type Policy struct {
	// Version names this set of rules and constants; it is printed beside every verdict.
	Version string
	Rules   []Rule
}

// Rule is one step of a policy.
type Rule struct {
	// ID is the rule's stable short name, the one a trace's Step carries.
	ID string
	// Scope is what the rule looks at, where the policy has scopes (compare's: "runs" before
	// any metric, "row" one metric, "verdict" the whole comparison); empty where it has none.
	Scope string
	// Condition is what the rule tests, in a sentence.
	Condition string
	// Reads are the figures it reads.
	Reads []string
	// Effect is what it does when the condition holds, in a sentence.
	Effect string
	// Constants are the rule's tuned values.
	Constants []Constant
}

// Constant is one named value of a rule.
type Constant struct {
	Name  string
	Value float64
	Unit  string
	// Kind is what sets the value: "" (Tuned) a value chosen for the rule, or OptionDefault,
	// the default of a command-line option that the user may set.
	Kind string
}

// Kinds of a constant.
const (
	Tuned         = ""
	OptionDefault = "option default"
)

// Step is one rule that fired, with the figures it read.
type Step struct {
	Rule string `json:"rule"`
	// Effect is what the rule did here. Where the step set a result (compare: a row's change
	// or the verdict), exactly the result it set ("regressed", "inconclusive", …); else a
	// short phrase.
	Effect string `json:"effect"`
	// Changed: the step set the result (compare: the row's change or the verdict; the steady
	// check: set or cleared a finding that counts against the verdict).
	Changed bool     `json:"changed,omitempty"`
	Figures []Figure `json:"figures,omitempty"`
}

// Figure is one figure a step read, by name.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Index is the rule's position in the policy (0 first), −1 when no rule has the ID.
func (p Policy) Index(id string) int {
	for i, r := range p.Rules {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// Has says whether the policy holds the rule.
func (p Policy) Has(id string) bool { return p.Index(id) >= 0 }

// Constants counts the policy's named constants.
func (p Policy) Constants() int {
	n := 0
	for _, r := range p.Rules {
		n += len(r.Constants)
	}
	return n
}

// Tuned counts the policy's tuned constants: those that are not an option's default.
func (p Policy) Tuned() int {
	n := 0
	for _, r := range p.Rules {
		for _, c := range r.Constants {
			if c.Kind == Tuned {
				n++
			}
		}
	}
	return n
}

// Constant is the value of the policy's constant of that name (the first rule's that lists
// it), and whether a rule lists it.
func (p Policy) Constant(name string) (float64, bool) {
	for _, r := range p.Rules {
		for _, c := range r.Constants {
			if c.Name == name {
				return c.Value, true
			}
		}
	}
	return 0, false
}
