package conditions

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// answerFiles name the recorded answer to a probe, the first that exists: /a/b asked about
// model m (a JSON body {"model": m}) is testdata/DIR/a_b@m.txt (":" written "_"), else
// testdata/DIR/a_b.txt. The capture package serves the same files over HTTP, so both read one
// recording.
func answerFiles(dir string, p Probe) []string {
	base := filepath.Join("testdata", dir, strings.ReplaceAll(strings.TrimPrefix(p.Path, "/"), "/", "_"))
	var body struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(p.Body, &body) == nil && body.Model != "" {
		return []string{base + "@" + strings.ReplaceAll(body.Model, ":", "_") + ".txt", base + ".txt"}
	}
	return []string{base + ".txt"}
}

// replay answers probes from a family's recording, as a server would: a missing file is a
// path the server does not have.
func replay(t *testing.T, dir string, a Answers, probes []Probe) {
	t.Helper()
	for _, p := range probes {
		for _, f := range answerFiles(dir, p) {
			if b, err := os.ReadFile(f); err == nil {
				a[p.Path] = b
				break
			}
		}
	}
}

// recordedAnswers runs discovery's two rounds against a recording, about model (none: ""),
// without any network.
func recordedAnswers(t *testing.T, dir, model string) Answers {
	t.Helper()
	a := Answers{}
	replay(t, dir, a, Probes())
	replay(t, dir, a, FollowUps(a, model))
	return a
}

func format(s Set) string {
	var b strings.Builder
	for _, c := range s {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", c.Key, c.Value, c.Source)
	}
	return b.String()
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestFromAnswersRecorded feeds each family's recorded answers, and a recorded nvidia-smi
// output, to the pure parsers and checks the whole condition set against a golden file (the
// same one capture's test over HTTP must match); the key facts are also checked by name.
func TestFromAnswersRecorded(t *testing.T) {
	smi, err := os.ReadFile("testdata/nvidia-smi.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want map[string]string
	}{
		{"vllm", map[string]string{ServerFamily: VLLM, ServerVer: "0.8.5.post1", MaxModelLen: "32768",
			FlagPrefix + "gpu_memory_utilization": "0.9", KVCacheTokens: "433264", GPUName: "2 x NVIDIA H100 80GB HBM3"}},
		{"sglang", map[string]string{ServerFamily: SGLang, ServerVer: "0.4.6.post1", Quantization: "none",
			MaxNumSeqs: "2048", KVCacheTokens: "1012413", Tokenizer: "Qwen/Qwen2.5-7B-Instruct"}},
		{"tgi", map[string]string{ServerFamily: TGI, ServerVer: "3.0.1", Model: "mistralai/Mistral-7B-Instruct-v0.3",
			MaxModelLen: "4096", FlagPrefix + "max_concurrent_requests": "128"}},
		{"llamacpp", map[string]string{ServerFamily: LlamaCpp, ServerVer: "b11669-Debian", MaxNumSeqs: "2",
			Quantization: "all F32", FlagPrefix + "ctx_per_slot": "1024"}},
		{"ollama", map[string]string{ServerFamily: Ollama, ServerVer: "0.17.4", Quantization: "Q8_0",
			Model: "llama3.2:1b", "model.parameters": "1.2B", FlagPrefix + "num_ctx": "4096", "model.context_train": "131072"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			s := Complete(Merge(FromAnswers(recordedAnswers(t, tc.dir, ""), ""), GPUFromSMI(string(smi))))
			for k, v := range tc.want {
				if got := s.Value(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			golden(t, filepath.Join("testdata", tc.dir, "want.golden"), format(s))
		})
	}
}

// TestFromAnswersNothing: no answers give no facts, and Complete says so with unknowns.
func TestFromAnswersNothing(t *testing.T) {
	if s := FromAnswers(nil, "m"); len(s) != 0 {
		t.Errorf("FromAnswers(nil) = %v, want nothing", s)
	}
	if FollowUps(nil, "m") != nil {
		t.Errorf("follow-ups asked of a server that answered nothing")
	}
}

// TestFollowUpOllama: only Ollama asks a second round, and it names the model the first round
// found, so the follow-up is computed from the answers alone.
func TestFollowUpOllama(t *testing.T) {
	for _, dir := range []string{"vllm", "sglang", "tgi", "llamacpp"} {
		a := Answers{}
		replay(t, dir, a, Probes())
		if f := FollowUps(a, ""); len(f) != 0 {
			t.Errorf("%s: follow-ups %v, want none", dir, f)
		}
	}
	a := Answers{}
	replay(t, "ollama", a, Probes())
	f := FollowUps(a, "")
	if len(f) != 1 || f[0].Method != "POST" || f[0].Path != "/api/show" || string(f[0].Body) != `{"model":"llama3.2:1b"}` {
		t.Fatalf("ollama follow-ups = %+v, want POST /api/show for llama3.2:1b", f)
	}
	// without /api/ps the first /v1/models id is still the model to show
	delete(a, "/api/ps")
	if f := FollowUps(a, ""); len(f) != 1 || string(f[0].Body) != `{"model":"llama3.2:1b"}` {
		t.Errorf("ollama follow-ups without /api/ps = %+v", f)
	}
}

// TestProbesDeclared: the first round asks every path once, each a GET, and every family
// declares at least one probe and a parser.
func TestProbesDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Probes() {
		if seen[p.Path] || p.Method != "GET" || !strings.HasPrefix(p.Path, "/") {
			t.Errorf("probe %+v: duplicate, not a GET or not a path", p)
		}
		seen[p.Path] = true
	}
	for _, f := range Families() {
		if f.Name == "" || len(f.Probes) == 0 || f.Parse == nil {
			t.Errorf("family %q declares no probe or no parser", f.Name)
		}
	}
}

// TestGPUFromSMI: several identical GPUs are counted; mixed ones are listed in full.
func TestGPUFromSMI(t *testing.T) {
	s := Merge(GPUFromSMI("NVIDIA L4, 550.1, 23034 MiB\nNVIDIA A100, 550.1, 81920 MiB\n"))
	if got := s.Value(GPUName); got != "NVIDIA L4; NVIDIA A100" {
		t.Errorf("gpu.name = %q", got)
	}
	if got := s.Value(GPUDriver); got != "550.1" {
		t.Errorf("gpu.driver = %q", got)
	}
	if GPUFromSMI("") != nil {
		t.Errorf("empty nvidia-smi output gave facts")
	}
}
