package conditions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/record"
)

func c(k, v, src string) record.Condition { return record.Condition{Key: k, Value: v, Source: src} }

func TestDiffKinds(t *testing.T) {
	base := []record.Condition{c(WorkloadHash, "a", Detected), c("workload.output_tokens", "16", Detected),
		c("sim.itl", "20ms", Detected), c(GPUName, "L4", Declared), c(ClientCPU, "x", Detected), c(ServerVer, "", Unknown)}
	cand := []record.Condition{c(WorkloadHash, "b", Detected), c("workload.output_tokens", "32", Detected),
		c("sim.itl", "25ms", Detected), c(GPUName, "L4", Declared), c(ClientCPU, "y", Detected), c(ServerVer, "1.0", Detected)}
	kinds := func(expect ...string) map[string]string {
		m := map[string]string{}
		for _, d := range Diff(base, cand, expect) {
			m[d.Key] = d.Kind
		}
		return m
	}
	got := kinds()
	want := map[string]string{WorkloadHash: KindBlocking, "workload.output_tokens": KindBlocking, "sim.itl": KindInfo,
		ClientCPU: KindInfo, ServerVer: KindUnknown}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: kind %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got[GPUName]; ok {
		t.Errorf("equal gpu.name listed as a difference")
	}
	// naming the length change explains the hash change that follows from it
	got = kinds("output_tokens")
	if got["workload.output_tokens"] != KindExpected || got[WorkloadHash] != KindExpected {
		t.Errorf("with --expect-change output_tokens: %v", got)
	}
}

func TestDeclared(t *testing.T) {
	s, err := ParseDeclared([]string{"gpu.name=NVIDIA L4", "note="})
	if err != nil || s.Value(GPUName) != "NVIDIA L4" || s[0].Source != Declared {
		t.Fatalf("ParseDeclared: %v %v", s, err)
	}
	if n, _ := s.Get("note"); n.Source != Unknown {
		t.Errorf("empty declared value: source %q, want unknown", n.Source)
	}
	if _, err := ParseDeclared([]string{"novalue"}); err == nil {
		t.Error("key without = accepted")
	}
	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("gpu:\n  name: H100\n  driver: \"550.54\"\nserver.flag.tp: 2\n"), 0o644)
	f, err := LoadFile(p)
	if err != nil || f.Value(GPUDriver) != "550.54" || f.Value(GPUName) != "H100" || f.Value("server.flag.tp") != "2" {
		t.Errorf("LoadFile: %v %v", f, err)
	}
	// a failed probe's unknown never erases a value; a declaration wins over detection
	m := Merge(Set{c(GPUName, "A", Detected)}, Set{c(GPUName, "", Unknown)}, Set{c(GPUName, "B", Declared)})
	if m.Value(GPUName) != "B" {
		t.Errorf("merge: %v", m)
	}
}

// --expect-change takes a flag's spelling too: arrival-clock names measurement.arrival_clock;
// a declared key with a hyphen still matches as written.
func TestMatchesHyphens(t *testing.T) {
	for _, c := range []struct {
		key, name string
		want      bool
	}{
		{"measurement.arrival_clock", "arrival-clock", true},
		{"measurement.arrival_clock", "arrival_clock", true},
		{"gpu.model-name", "model-name", true},
		{"workload.output_tokens", "input-tokens", false},
	} {
		if got := Matches(c.key, []string{c.name}); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.key, c.name, got, c.want)
		}
	}
}

// The cache salt is kept out of the workload hash, so expecting its change does not explain
// a hash difference: different prompts stay not comparable.
func TestCacheSaltDoesNotExplainTheHash(t *testing.T) {
	base := []record.Condition{c(WorkloadHash, "a", Detected), c("sampling.cache_salt", "none", Detected)}
	cand := []record.Condition{c(WorkloadHash, "b", Detected), c("sampling.cache_salt", "per-run", Detected)}
	for _, d := range Diff(base, cand, []string{"cache-salt"}) {
		want := map[string]string{WorkloadHash: KindBlocking, "sampling.cache_salt": KindExpected}[d.Key]
		if d.Kind != want {
			t.Errorf("%s: kind %q, want %q", d.Key, d.Kind, want)
		}
	}
}

func TestLaunchConditionsNameTheFlag(t *testing.T) {
	h := func(cmd string, env ...any) *record.Header {
		return &record.Header{Config: map[string]any{"server_cmd": cmd, "server_env": env}}
	}
	a := FromHeader(h("llama-server -m mini.gguf --port {port} -np 1 --metrics", "A=1"))
	b := FromHeader(h("llama-server -m mini.gguf --port {port} -np 4 --metrics", "A=2"))
	if a.Value("launch.flag.np") != "1" || a.Value("launch.flag.metrics") != "true" || a.Value("launch.flag.m") != "mini.gguf" ||
		a.Value("launch.program") != "llama-server" || a.Value("launch.env.A") != "1" {
		t.Fatalf("conditions: %+v", a)
	}
	ds := Diff(a, b, nil)
	var keys []string
	for _, d := range ds {
		keys = append(keys, d.Key+":"+d.Kind)
	}
	want := []string{"launch.command:info", "launch.env.A:blocking", "launch.flag.np:blocking"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("Diff = %v, want %v", keys, want)
	}
	if flags, rest := Flags([]string{"sim", "--x=1", "-n", "-1", "--x", "2", "model"}); len(flags) != 2 || flags[0] != [2]string{"x", "1,2"} ||
		flags[1] != [2]string{"n", "-1"} || strings.Join(rest, " ") != "sim model" {
		t.Errorf("Flags = %v, %v", flags, rest)
	}
}
