package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/conditions"
	"servebench/internal/peertest"
	"servebench/sim"
	"servebench/sim/simtest"
)

// recorded serves a family's recorded answers: GET or POST /a/b is ../testdata/DIR/a_b.txt
// (a POST about model m: a_b@m.txt first);
// anything else is a 404, as on a server without that endpoint. The recordings, and their
// golden files, belong to the pure package conditions, whose test reads them without HTTP:
// this one proves that asking over HTTP gives the same set.
func recorded(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := filepath.Join(testdata, dir, strings.ReplaceAll(strings.TrimPrefix(r.URL.Path, "/"), "/", "_"))
		names := []string{base + ".txt"}
		var body struct {
			Model string `json:"model"`
		}
		if json.NewDecoder(r.Body).Decode(&body) == nil && body.Model != "" {
			// the answer about one model: a_b@model.txt, as the pure package's test reads it
			names = append([]string{base + "@" + strings.ReplaceAll(body.Model, ":", "_") + ".txt"}, names...)
		}
		for _, name := range names {
			if b, err := os.ReadFile(name); err == nil {
				w.Write(b)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// stubGPU makes nvidia-smi answer its --query-gpu queries with out (or be absent when out is
// ""), and fail every other call (no placement is then told).
func stubGPU(t *testing.T, out string) {
	stubSMI(t, func(args []string) (string, error) {
		if out == "" {
			return "", fmt.Errorf("nvidia-smi: not found")
		}
		if strings.HasPrefix(args[0], "--query-gpu=") {
			return out, nil
		}
		return "", fmt.Errorf("nvidia-smi %s: not stubbed", args[0])
	})
}

// stubSMI makes nvidia-smi answer each call with answer(args).
func stubSMI(t *testing.T, answer func(args []string) (string, error)) {
	old := nvidiaSMI
	nvidiaSMI = func(_ context.Context, args ...string) ([]byte, error) {
		out, err := answer(args)
		return []byte(out), err
	}
	t.Cleanup(func() { nvidiaSMI = old })
}

// testdata is the pure package's recordings.
const testdata = "../testdata"

func format(s conditions.Set) string {
	var b strings.Builder
	for _, c := range s {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", c.Key, c.Value, c.Source)
	}
	return b.String()
}

// TestDetectRecorded runs detection over HTTP against each family's recorded answers and checks
// the whole condition set against the golden file the pure parsers' test also matches. The
// facts checked by name come from the follow-up round (Ollama's POST /api/show) and from
// nvidia-smi, the two things only capture does.
func TestDetectRecorded(t *testing.T) {
	smi, err := os.ReadFile(filepath.Join(testdata, "nvidia-smi.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stubGPU(t, string(smi))
	for dir, want := range map[string]map[string]string{
		"vllm":     {conditions.GPUName: "2 x NVIDIA H100 80GB HBM3", conditions.GPUDriver: "550.54.15"},
		"sglang":   {conditions.GPUCount: "2"},
		"tgi":      {conditions.GPUMemory: "81559 MiB"},
		"llamacpp": {conditions.GPUCount: "2"},
		"ollama":   {"model.context_train": "131072", conditions.FlagPrefix + "num_ctx": "4096"},
	} {
		t.Run(dir, func(t *testing.T) {
			s := conditions.Complete(Detect(context.Background(), client.Target{BaseURL: recorded(t, dir)}, ""))
			for k, v := range want {
				if got := s.Value(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			want, err := os.ReadFile(filepath.Join(testdata, dir, "want.golden"))
			if err != nil {
				t.Fatal(err)
			}
			if got := format(s); got != string(want) {
				t.Errorf("%s/want.golden differs:\n--- got\n%s--- want\n%s", dir, got, want)
			}
		})
	}
}

// TestDetectNothing: a server that answers nothing gives only unknowns, quickly.
func TestDetectNothing(t *testing.T) {
	stubGPU(t, "")
	start := time.Now()
	s := conditions.Complete(Detect(context.Background(), client.Target{BaseURL: recorded(t, "none")}, ""))
	if time.Since(start) > ProbeTimeout {
		t.Errorf("detection took %v", time.Since(start))
	}
	for _, c := range s {
		if c.Source != conditions.Unknown {
			t.Errorf("%s = %q (%s), want unknown", c.Key, c.Value, c.Source)
		}
	}
	if len(s) != len(conditions.Expected) {
		t.Errorf("got %d conditions, want the %d expected ones as unknown", len(s), len(conditions.Expected))
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
	s, url := simtest.Start(t, cfg)
	got := Detect(context.Background(), client.Target{BaseURL: url}, "")
	for k, v := range map[string]string{conditions.ServerFamily: conditions.SimFamily, conditions.MaxNumSeqs: "64", conditions.Model: s.Describe()["model"],
		conditions.GPUName: s.Describe()["gpu"], "server.simulated": "true", conditions.DType: "bfloat16"} {
		if got.Value(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Value(k), v)
		}
	}
}

func TestDetectLlamaCppLive(t *testing.T) {
	stubGPU(t, "")
	url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "3", "-c", "1536")
	s := Detect(context.Background(), client.Target{BaseURL: url}, "")
	for k, v := range map[string]string{conditions.ServerFamily: conditions.LlamaCpp, conditions.MaxNumSeqs: "3", conditions.Quantization: "all F32",
		conditions.FlagPrefix + "ctx_per_slot": "512"} {
		if s.Value(k) != v {
			t.Errorf("%s = %q, want %q", k, s.Value(k), v)
		}
	}
	if !strings.HasPrefix(s.Value(conditions.ServerVer), "b") {
		t.Errorf("server.version = %q, want llama.cpp's build", s.Value(conditions.ServerVer))
	}
}
