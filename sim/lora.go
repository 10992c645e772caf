package sim

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LoRA adapters served beside the base model, as vLLM serves them (--enable-lora
// --lora-modules name=path --max-loras N): each adapter is a model id of its own in
// /v1/models, a request names one in its "model" field, and an unknown name is a 404.
//
// The engine model follows vLLM's scheduler: a batch holds at most MaxLoRAs distinct
// adapters (GPU slots), so a waiting request whose adapter would be one too many is skipped
// this step (vLLM counts it as waiting for reason "deferred") while later requests of loaded
// adapters go ahead; and a step that brings an adapter into a slot it did not hold (the
// least recently used one is evicted) costs LoadTime more per adapter loaded, vLLM's swap
// of the adapter's weights from CPU memory. The adapters add no compute of their own.
type LoRA struct {
	Adapters LoRAList      // adapter names (vLLM --lora-modules); empty = no LoRA
	MaxLoRAs int           // adapters one batch may mix (vLLM --max-loras, default 1)
	LoadTime time.Duration // cost of loading one adapter into a GPU slot
}

// LoRAList is a comma-separated list of adapter names, each optionally name=path as vLLM's
// --lora-modules takes them (the path is ignored: the simulator has no weights).
type LoRAList []string

// String renders the list as the flag takes it.
func (l *LoRAList) String() string { return strings.Join(*l, ",") }

// Set parses a comma-separated list; a repeated flag adds to it.
func (l *LoRAList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(f), "=")
		if name == "" {
			return fmt.Errorf("empty adapter name in %q", v)
		}
		if slices.Contains(*l, name) {
			return fmt.Errorf("adapter %q given twice", name)
		}
		*l = append(*l, name)
	}
	return nil
}

func bindLoRAFlags(fs *flag.FlagSet, c *Config) {
	fs.Var(&c.Adapters, "lora-modules", "LoRA adapters to serve beside the base model, comma-separated names (or name=path, as vLLM takes them): each is a model id in /v1/models")
	fs.IntVar(&c.MaxLoRAs, "max-loras", c.MaxLoRAs, "LoRA adapters one batch may mix (vLLM --max-loras); requests of another adapter wait")
	fs.DurationVar(&c.LoadTime, "lora-load-time", c.LoadTime, "cost added to a step for each LoRA adapter it loads into a GPU slot (model mode)")
}

func (c *Config) validateLoRA() error {
	if c.MaxLoRAs < 1 {
		return fmt.Errorf("--max-loras must be at least 1, got %d", c.MaxLoRAs)
	}
	if c.LoadTime < 0 {
		return fmt.Errorf("--lora-load-time must not be negative, got %s", c.LoadTime)
	}
	if slices.Contains(c.Adapters, c.ServedModelName) && c.ServedModelName != "" {
		return errors.New("--lora-modules: an adapter may not take the base model's name " + c.ServedModelName)
	}
	return nil
}

// describeLoRA adds the adapters to the conditions.
func (c *Config) describeLoRA(d map[string]string) {
	if len(c.Adapters) > 0 {
		d["lora_modules"] = c.Adapters.String()
		d["max_loras"] = strconv.Itoa(c.MaxLoRAs)
		d["lora_load_time"] = c.LoadTime.String()
	}
}

// resolveModel maps a request's model field to the base model (0) or an adapter (its index
// from 1); false for a name the server does not serve.
func (s *Server) resolveModel(name string) (int, bool) {
	if name == "" || name == s.modelName {
		return 0, true
	}
	i := slices.Index(s.cfg.Adapters, name)
	return i + 1, i >= 0
}

// modelCards are /v1/models' entries: the base model, then each adapter with the base as
// its parent, as vLLM lists them.
func (s *Server) modelCards() []any {
	cards := []any{map[string]any{
		"id": s.modelName, "object": "model", "created": s.created, "owned_by": "servebench-simulator",
		"root": s.modelName, "max_model_len": s.maxModelLen(),
	}}
	for _, a := range s.cfg.Adapters {
		cards = append(cards, map[string]any{"id": a, "object": "model", "created": s.created,
			"owned_by": "servebench-simulator", "root": a, "parent": s.modelName, "max_model_len": s.maxModelLen()})
	}
	return cards
}

// loraSlots is the engine's LoRA state: the adapters held in GPU slots, most recently used
// first, and this step's admission set. nil without adapters: every method is then a no-op.
type loraSlots struct {
	max      int
	loadTime time.Duration
	slots    []int // adapter indexes held, most recently used first
	active   []int // distinct adapters of the batch being planned
	loads    int64 // adapters loaded since start
}

func newLoRASlots(c *Config) *loraSlots {
	if len(c.Adapters) == 0 {
		return nil
	}
	return &loraSlots{max: c.MaxLoRAs, loadTime: c.LoadTime}
}

// beginAdmit takes the running sequences' adapters as the batch's active set.
func (l *loraSlots) beginAdmit(running []*seq) {
	if l == nil {
		return
	}
	l.active = l.active[:0]
	for _, q := range running {
		if q.lora > 0 && !q.done && !slices.Contains(l.active, q.lora) {
			l.active = append(l.active, q.lora)
		}
	}
}

// admits reports whether q may join the batch, adding its adapter to the active set.
func (l *loraSlots) admits(q *seq) bool {
	if l == nil || q.lora == 0 || slices.Contains(l.active, q.lora) {
		return true
	}
	if len(l.active) >= l.max {
		return false
	}
	l.active = append(l.active, q.lora)
	return true
}

// deferred counts the waiting sequences the active set keeps out (vLLM's "deferred").
func (l *loraSlots) deferred(waiting []*seq) int64 {
	if l == nil || len(l.active) < l.max {
		return 0
	}
	var n int64
	for _, q := range waiting {
		if q.lora > 0 && !slices.Contains(l.active, q.lora) {
			n++
		}
	}
	return n
}

// loadCost moves the step's adapters to the front of the slots and returns the cost of
// loading those that were not held.
func (l *loraSlots) loadCost(plan []planned) time.Duration {
	if l == nil {
		return 0
	}
	var loaded time.Duration
	for _, p := range plan {
		a := p.q.lora
		if a == 0 {
			continue
		}
		if i := slices.Index(l.slots, a); i >= 0 {
			l.slots = slices.Delete(l.slots, i, i+1)
		} else {
			loaded += l.loadTime
			l.loads++
		}
		l.slots = slices.Insert(l.slots, 0, a)
		if len(l.slots) > l.max {
			l.slots = l.slots[:l.max]
		}
	}
	return loaded
}

// salt makes a prompt's block hashes the adapter's own, as vLLM puts the LoRA id in its
// block hashes: the KV an adapter computed is not the base model's nor another adapter's, so
// the same prompt sent to two adapters shares no cached block. Every hash so far and the
// running state (the seed of the blocks still to come) take the same adapter's salt, so
// requests of one adapter still share their blocks.
func (b *blockHasher) salt(lora int) {
	if lora == 0 {
		return
	}
	s := mix64(uint64(lora) ^ 0x1025a17)
	for i := range b.out {
		b.out[i] ^= s
	}
	b.h ^= s
}

// loraInfo is vllm:lora_requests_info's label set for the adapters of the running and the
// waiting sequences, by name in adapter order ("" without adapters).
func (l *loraSlots) info(names []string, running, waiting []*seq) string {
	if l == nil {
		return ""
	}
	list := func(qs []*seq) string {
		seen := make([]bool, len(names)+1)
		for _, q := range qs {
			seen[q.lora] = true
		}
		var out []string
		for i, n := range names {
			if seen[i+1] {
				out = append(out, n)
			}
		}
		return promEscape(strings.Join(out, ","))
	}
	return `max_lora="` + strconv.Itoa(l.max) + `",running_lora_adapters="` + list(running) + `",waiting_lora_adapters="` + list(waiting) + `"`
}

// writeLoRAInfo renders vllm:lora_requests_info: vLLM's gauge whose labels name the adapters
// in use and whose value is when they were read (Unix seconds).
func (p *promWriter) writeLoRAInfo(labels *string) {
	if labels == nil || *labels == "" {
		return
	}
	p.header("vllm:lora_requests_info", "gauge", "Running stats on lora requests.")
	p.sample("vllm:lora_requests_info", ","+*labels, float64(time.Now().UnixNano())/1e9)
}
