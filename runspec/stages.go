package runspec

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"servebench/record"
)

// Load stages (--stages) run several loads one after the other in one run: one records file,
// one warmup, each stage its own figures (Record.Stage). A stage is LOADxDURATION, LOAD being
// closed-loop users (8x60s) or an open-loop rate (2rpsx30s, also 2/sx30s); all stages of a run
// are of one kind.

// MaxStages bounds the number of stages: a longer list is a sweep, or a typo.
const MaxStages = 1000

// ParseStages reads a --stages value: "8x60s,32x60s,64x60s" or "2rpsx30s,8rpsx30s" (spaces
// around the parts are allowed: "2rps x 30s, 8rps x 30s").
func ParseStages(v string) ([]record.Stage, error) {
	// counted before any is parsed: a value of a million commas is refused, not built
	if n := strings.Count(v, ",") + 1; n > MaxStages {
		return nil, Usagef("--stages: %d stages, want at most %d", n, MaxStages)
	}
	var out []record.Stage
	for item := range strings.SplitSeq(v, ",") {
		st, err := parseStage(strings.ReplaceAll(item, " ", ""))
		if err != nil {
			return nil, Usagef("--stages %.200q: stage %.80q: %v", v, strings.TrimSpace(item), err)
		}
		out = append(out, st)
	}
	switch {
	case out[0].Users > 0 != (out[len(out)-1].Users > 0) || mixedStages(out):
		return nil, Usagef("--stages %q: give users (8x60s) or rates (2rpsx30s) in every stage, not both", v)
	}
	var total int64
	for _, st := range out {
		total += st.Duration
		if total > int64(24*365*time.Hour) {
			return nil, Usagef("--stages %q: the stages last more than a year", v)
		}
	}
	return out, nil
}

// stageErr is why a stage did not parse, in words.
type stageErr string

func (e stageErr) Error() string { return string(e) }

const wantStage = stageErr("want USERSxDURATION (8x60s) or RATErpsxDURATION (2rpsx30s)")

// parseStage reads one LOADxDURATION.
func parseStage(s string) (record.Stage, error) {
	i := strings.LastIndex(s, "x")
	if i <= 0 {
		return record.Stage{}, wantStage
	}
	load, dur := s[:i], s[i+1:]
	d, err := time.ParseDuration(dur)
	if err != nil || d <= 0 {
		return record.Stage{}, stageErr("the duration must be positive, like 30s or 2m")
	}
	st := record.Stage{Duration: int64(d)}
	rate, isRate := strings.CutSuffix(load, "rps")
	if !isRate {
		rate, isRate = strings.CutSuffix(load, "/s")
	}
	if isRate {
		r, err := strconv.ParseFloat(rate, 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return record.Stage{}, stageErr("the rate must be a positive number of requests per second")
		}
		st.Rate = r
		return st, nil
	}
	n, err := strconv.Atoi(load)
	if err != nil {
		return record.Stage{}, wantStage
	}
	if n < 1 || n > MaxCount {
		return record.Stage{}, stageErr("the users must be 1 to " + strconv.Itoa(MaxCount))
	}
	st.Users = n
	return st, nil
}

// mixedStages reports whether some stages are users and others rates.
func mixedStages(sts []record.Stage) bool {
	for _, st := range sts[1:] {
		if (st.Users > 0) != (sts[0].Users > 0) {
			return true
		}
	}
	return false
}

// StageList is the parsed --stages (nil when not set; validated).
func (s *Spec) StageList() []record.Stage {
	if s.Stages == "" {
		return nil
	}
	sts, _ := ParseStages(s.Stages)
	return sts
}

// rateStages reports whether --stages gives rates: an open loop.
func (s *Spec) rateStages() bool {
	sts := s.StageList()
	return len(sts) > 0 && sts[0].Rate > 0
}

// stagesDuration is the stages' total length.
func stagesDuration(sts []record.Stage) time.Duration {
	var d int64
	for _, st := range sts {
		d += st.Duration
	}
	return time.Duration(d)
}

// resolveStages fills in what --stages decides: the duration (the stages' sum) and, for
// user stages, the concurrency (the most users of any stage, for the connection pool).
func (s *Spec) resolveStages() {
	sts := s.StageList()
	if len(sts) == 0 {
		return
	}
	s.Duration = stagesDuration(sts)
	for _, st := range sts {
		s.Concurrency = max(s.Concurrency, st.Users)
	}
}

// stageWarmup is the default warmup of a staged run: one request per user of the first
// stage, or one second of its arrivals (the warmup runs at the first stage's load).
func (s *Spec) stageWarmup() int {
	sts := s.StageList()
	if len(sts) == 0 {
		return 1 // not valid: Validate says why
	}
	st := sts[0]
	if st.Users > 0 {
		return st.Users
	}
	return max(1, int(st.Rate))
}

// validateStages checks --stages and what it excludes: it is the whole load shape and its
// length, so the other load and stop settings have nothing left to say.
func (s *Spec) validateStages() error {
	if s.Stages == "" && !s.IsSet("stages") {
		return nil
	}
	if _, err := ParseStages(s.Stages); err != nil {
		return err
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"concurrency", s.IsSet("concurrency")}, {"rate", s.Rate > 0}, {"ramp", s.Ramp != ""}, {"trace", s.Trace != ""},
		{"duration", s.IsSet("duration")}, {"requests", s.Requests > 0}, {"shard", s.Shard != ""}, {"turns", s.Turns > 1},
		{"warmup-duration", s.WarmupDuration > 0}, {"cooldown-duration", s.CooldownDuration > 0}} {
		if k.set {
			return Usagef("--stages is the whole load and its length: leave out --%s", k.key)
		}
	}
	if s.TraceDataset() {
		return Usagef("--stages and a trace dataset exclude each other: the trace is its own schedule")
	}
	return nil
}

// bindStageFlags registers --stages.
func bindStageFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.Stages, "stages", s.Stages, "load stages one after the other in one run, each with its own figures: USERSxDURATION,… (closed loop: 8x60s,32x60s,64x60s) or RATErpsxDURATION,… (open loop: 2rpsx30s,8rpsx30s); replaces --concurrency, --rate and --duration")
}
