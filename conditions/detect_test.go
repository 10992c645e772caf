package conditions

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/internal/peertest"
	"servebench/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// recorded serves a family's recorded answers: GET or POST /a/b is testdata/DIR/a_b.txt;
// anything else is a 404, as on a server without that endpoint.
func recorded(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.ReplaceAll(strings.TrimPrefix(r.URL.Path, "/"), "/", "_") + ".txt"
		b, err := os.ReadFile(filepath.Join("testdata", dir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// stubGPU makes nvidia-smi answer with out (or be absent when out is "").
func stubGPU(t *testing.T, out string) {
	old := nvidiaSMI
	nvidiaSMI = func(context.Context) ([]byte, error) {
		if out == "" {
			return nil, fmt.Errorf("nvidia-smi: not found")
		}
		return []byte(out), nil
	}
	t.Cleanup(func() { nvidiaSMI = old })
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

// TestDetectRecorded runs detection against each family's recorded answers and checks the
// whole condition set against a golden file; the key facts are also checked by name.
func TestDetectRecorded(t *testing.T) {
	smi, _ := os.ReadFile("testdata/nvidia-smi.txt")
	stubGPU(t, string(smi))
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
			s := Complete(Detect(context.Background(), client.Target{BaseURL: recorded(t, tc.dir)}))
			for k, v := range tc.want {
				if got := s.Value(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			golden(t, filepath.Join("testdata", tc.dir, "want.golden"), format(s))
		})
	}
}

// TestDetectNothing: a server that answers nothing gives only unknowns, quickly.
func TestDetectNothing(t *testing.T) {
	stubGPU(t, "")
	start := time.Now()
	s := Complete(Detect(context.Background(), client.Target{BaseURL: recorded(t, "none")}))
	if time.Since(start) > ProbeTimeout {
		t.Errorf("detection took %v", time.Since(start))
	}
	for _, c := range s {
		if c.Source != Unknown {
			t.Errorf("%s = %q (%s), want unknown", c.Key, c.Value, c.Source)
		}
	}
	if len(s) != len(Expected) {
		t.Errorf("got %d conditions, want the %d expected ones as unknown", len(s), len(Expected))
	}
}

// TestGPUOnlyForLoopback: this machine's GPUs describe only a server on this machine.
func TestGPUOnlyForLoopback(t *testing.T) {
	for u, want := range map[string]bool{"http://127.0.0.1:8000": true, "http://localhost:1": true, "http://[::1]:80": true,
		"http://10.0.0.5:8000": false, "https://api.example.com": false} {
		if IsLoopback(u) != want {
			t.Errorf("IsLoopback(%s) = %v", u, !want)
		}
	}
}

func TestDetectSimulatorLive(t *testing.T) {
	stubGPU(t, "NVIDIA A100, 1, 1 MiB") // must not be used: the simulator's GPU is simulated
	cfg := sim.DefaultConfig()
	cfg.MaxNumSeqs = 64
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := Detect(context.Background(), client.Target{BaseURL: url})
	for k, v := range map[string]string{ServerFamily: SimFamily, MaxNumSeqs: "64", Model: s.Describe()["model"],
		GPUName: s.Describe()["gpu"], "server.simulated": "true", DType: "bfloat16"} {
		if got.Value(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Value(k), v)
		}
	}
}

func TestDetectLlamaCppLive(t *testing.T) {
	stubGPU(t, "")
	url := peertest.Llama(t, "tiny.gguf", "-t", "2", "-np", "3", "-c", "1536")
	s := Detect(context.Background(), client.Target{BaseURL: url})
	for k, v := range map[string]string{ServerFamily: LlamaCpp, MaxNumSeqs: "3", Quantization: "all F32",
		FlagPrefix + "ctx_per_slot": "512"} {
		if s.Value(k) != v {
			t.Errorf("%s = %q, want %q", k, s.Value(k), v)
		}
	}
	if !strings.HasPrefix(s.Value(ServerVer), "b") {
		t.Errorf("server.version = %q, want llama.cpp's build", s.Value(ServerVer))
	}
}
