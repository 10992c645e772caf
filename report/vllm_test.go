package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"iter"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// vllmKeys are the keys vLLM's benchmarks/serve.py writes with --save-result --save-detailed
// for a generation backend, in its order, with their JSON types as Python's json module
// writes them ("int" and "float" are told apart: Python loads 1 as an int and 1.0 as a
// float). The distribution keys follow, one set per distribution and percentile.
var vllmKeys = []struct{ key, typ string }{
	{"date", "string"}, {"endpoint_type", "string"}, {"backend", "string"}, {"label", "string|null"},
	{"model_id", "string"}, {"tokenizer_id", "string|null"}, {"num_prompts", "int"},
	{"request_rate", "float|inf"}, {"burstiness", "float|inf"}, {"max_concurrency", "int|null"},
	{"duration", "float"}, {"completed", "int"}, {"failed", "int"},
	{"total_input_tokens", "int"}, {"total_output_tokens", "int"},
	{"request_throughput", "float"}, {"request_goodput", "float|null"},
	{"output_throughput", "float"}, {"total_token_throughput", "float"},
	{"input_lens", "[]int"}, {"output_lens", "[]int"}, {"ttfts", "[]float"}, {"itls", "[][]float"},
	{"latencies", "[]float"}, {"start_times", "[]float"}, {"queue_times", "[]float"},
	{"generated_texts", "[]string"}, {"errors", "[]string"},
	{"max_output_tokens_per_s", "float"}, {"max_concurrent_requests", "int"}, {"rtfx", "float"},
}

// vllmDistKeys are the distribution keys for the given distributions and percentiles.
func vllmDistKeys(dists []string, ps []float64) []string {
	var out []string
	for _, d := range dists {
		out = append(out, "mean_"+d+"_ms", "median_"+d+"_ms", "std_"+d+"_ms")
		for _, p := range ps {
			out = append(out, "p"+pctName(p)+"_"+d+"_ms")
		}
	}
	return out
}

// jsonType names the JSON type of v as decoded with UseNumber, int and float apart.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "inf" {
			return "inf"
		}
		return "string"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "float"
		}
		return "int"
	case bool:
		return "bool"
	case []any:
		elem := "[]" // an empty array, or one of empty arrays, fits an array of any type
		for _, e := range x {
			t := "[]" + jsonType(e)
			if t == "[][]" && strings.HasPrefix(elem, t) {
				continue
			}
			if elem != "[]" && elem != "[][]" && t != elem {
				return "[]mixed"
			}
			elem = t
		}
		return elem
	}
	return "object"
}

func typeOK(got, want string) bool {
	for _, w := range strings.Split(want, "|") {
		if got == w || (strings.HasSuffix(got, "[]") && strings.HasPrefix(w, got)) { // empty arrays fit any
			return true
		}
	}
	return false
}

// decodeVLLM decodes every line of the vllm format's output.
func decodeVLLM(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("line %d: %v", len(objs)+1, err)
		}
		objs = append(objs, m)
	}
	return objs
}

// checkVLLMKeys checks one result object: every vLLM key, in vLLM's order, with its type; no
// other key but servebench_ ones; per-request arrays of one length each.
func checkVLLMKeys(t *testing.T, line string, m map[string]any, dists []string, ps []float64) {
	t.Helper()
	want := map[string]bool{}
	at := -1
	check := func(k, typ string) {
		want[k] = true
		v, ok := m[k]
		if !ok {
			t.Errorf("key %s missing", k)
			return
		}
		if got := jsonType(v); !typeOK(got, typ) {
			t.Errorf("%s is %s (%v), want %s", k, got, v, typ)
		}
		i := strings.Index(line, `"`+k+`":`)
		if i < at {
			t.Errorf("%s is out of vLLM's order", k)
		}
		at = i
	}
	for _, k := range vllmKeys {
		check(k.key, k.typ)
	}
	for _, k := range vllmDistKeys(dists, ps) {
		check(k, "float")
	}
	for k := range m {
		if !want[k] && !strings.HasPrefix(k, "servebench_") {
			t.Errorf("key %s is neither vLLM's nor servebench_", k)
		}
	}
	n := len(m["errors"].([]any))
	for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times", "generated_texts",
		"servebench_tpots", "servebench_successes"} {
		if got := len(m[k].([]any)); got != n {
			t.Errorf("%s has %d entries, errors %d", k, got, n)
		}
	}
	// success is what vLLM's errors array says by an empty string; TPOT is (latency − ttft) /
	// (output − 1) for a success with more than one token, else 0
	for i := range n {
		okv := m["servebench_successes"].([]any)[i].(bool)
		if okv != (m["errors"].([]any)[i] == "") {
			t.Errorf("request %d: success %v, error %q", i, okv, m["errors"].([]any)[i])
		}
		out := jnum(m["output_lens"].([]any)[i])
		tpot := jnum(m["servebench_tpots"].([]any)[i])
		want := 0.0
		if okv && out > 1 {
			want = (jnum(m["latencies"].([]any)[i]) - jnum(m["ttfts"].([]any)[i])) / (out - 1)
		}
		if math.Abs(tpot-want) > 1e-9 {
			t.Errorf("request %d: tpot %v, want %v", i, tpot, want)
		}
	}
	if notes, ok := m["servebench_notes"].([]any); !ok || len(notes) == 0 || !strings.Contains(line, "generated_texts are empty strings") {
		t.Errorf("servebench_notes = %v", m["servebench_notes"])
	}
}

func jnum(v any) float64 {
	f, _ := v.(json.Number).Float64()
	return f
}

// TestVLLMKeysAndTypes renders the fixture files and checks every key and type, and that the
// per-request arrays agree with the figures beside them (as a script recomputing vLLM's
// figures from them would find).
func TestVLLMKeysAndTypes(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "vllm", fileInput(t, "base.jsonl")); err != nil {
		t.Fatal(err)
	}
	objs := decodeVLLM(t, b.Bytes())
	if len(objs) != 1 {
		t.Fatalf("%d objects, want 1", len(objs))
	}
	m := objs[0]
	checkVLLMKeys(t, strings.TrimSpace(b.String()), m, []string{"ttft", "tpot", "itl", "e2el", "client_queue_time"}, metrics.DefaultPercentiles)
	if m["backend"] != "openai" || m["endpoint_type"] != "openai" || m["request_rate"] != "inf" || jnum(m["max_concurrency"]) != 4 ||
		jnum(m["burstiness"]) != 1 || jnum(m["num_prompts"]) != 24 {
		t.Errorf("backend %v request_rate %v max_concurrency %v burstiness %v num_prompts %v",
			m["backend"], m["request_rate"], m["max_concurrency"], m["burstiness"], m["num_prompts"])
	}
	if _, ok := m["mean_client_queue_time_ms"]; !ok {
		t.Error("a closed loop (max_concurrency set) has no client queue figures")
	}
	if _, ok := m["mean_e2el_including_client_queue_ms"]; ok {
		t.Error("an infinite rate has e2el_including_client_queue figures (vLLM writes them only for a finite rate)")
	}

	errs := m["errors"].([]any)
	var ttft, lat, in float64
	var failed, out int
	for i, e := range errs {
		if e != "" {
			failed++
			if jnum(m["output_lens"].([]any)[i]) != 0 || jnum(m["latencies"].([]any)[i]) != 0 {
				t.Errorf("failed request %d: output_len %v latency %v, want 0 as vLLM", i, m["output_lens"].([]any)[i], m["latencies"].([]any)[i])
			}
			continue
		}
		ttft += jnum(m["ttfts"].([]any)[i])
		lat += jnum(m["latencies"].([]any)[i])
		in += jnum(m["input_lens"].([]any)[i])
		out += int(jnum(m["output_lens"].([]any)[i]))
	}
	ok := float64(len(errs) - failed)
	if failed != int(jnum(m["failed"])) || int(ok) != int(jnum(m["completed"])) || out != int(jnum(m["total_output_tokens"])) || in != jnum(m["total_input_tokens"]) {
		t.Errorf("arrays: %d failed, %v ok, %d out, %v in; keys %v %v %v %v", failed, ok, out, in, m["failed"], m["completed"], m["total_output_tokens"], m["total_input_tokens"])
	}
	if d := math.Abs(ttft/ok*1000 - jnum(m["mean_ttft_ms"])); d > 1e-6 {
		t.Errorf("mean of ttfts %v ms, mean_ttft_ms %v", ttft/ok*1000, m["mean_ttft_ms"])
	}
	if d := math.Abs(lat/ok*1000 - jnum(m["mean_e2el_ms"])); d > 1e-6 {
		t.Errorf("mean of latencies %v ms, mean_e2el_ms %v", lat/ok*1000, m["mean_e2el_ms"])
	}
	starts := m["start_times"].([]any)
	for i := 1; i < len(starts); i++ {
		if jnum(starts[i]) < jnum(starts[i-1])-0.01 {
			t.Errorf("start_times not in request order at %d: %v after %v", i, starts[i], starts[i-1])
		}
	}
}

// TestVLLMOpenLoop checks the traffic keys of an open loop: the rate as a float, gamma's
// burstiness, the cap, and the queue figures vLLM adds with a cap and a finite rate.
func TestVLLMOpenLoop(t *testing.T) {
	h := header(false)
	h.Config = map[string]any{"rate": 8.0, "arrival": "gamma", "burstiness": 0.5, "max_concurrency": 16.0, "requests": 5.0}
	h.Workload.Tokenizer = "server:/tokenize"
	h.Ends = []record.RunEnd{{Run: 0, Stop: "requests"}}
	var b bytes.Buffer
	if err := Render(&b, "vllm", Input{Header: h, Records: recordsOf(basicRecords())}); err != nil {
		t.Fatal(err)
	}
	objs := decodeVLLM(t, b.Bytes())
	m := objs[0]
	checkVLLMKeys(t, strings.TrimSpace(b.String()), m,
		[]string{"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"}, metrics.DefaultPercentiles)
	if m["request_rate"] != json.Number("8.0") || m["burstiness"] != json.Number("0.5") || m["max_concurrency"] != json.Number("16") ||
		m["backend"] != "openai-chat" || m["tokenizer_id"] != "server:/tokenize" || m["request_goodput"] != nil {
		t.Errorf("request_rate %v burstiness %v max_concurrency %v backend %v tokenizer_id %v request_goodput %v",
			m["request_rate"], m["burstiness"], m["max_concurrency"], m["backend"], m["tokenizer_id"], m["request_goodput"])
	}
	if got := m["errors"].([]any)[4]; got != "http_5xx: overloaded" {
		t.Errorf("the failed request's error is %q", got)
	}
}

// TestVLLMSeveralRuns checks that a file of several runs gives one line per run, as vLLM's
// --append-result writes several results, and that the empty file still has vLLM's types.
func TestVLLMSeveralRuns(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "vllm", fileInput(t, "repeat.jsonl")); err != nil {
		t.Fatal(err)
	}
	objs := decodeVLLM(t, b.Bytes())
	if len(objs) != 3 {
		t.Fatalf("%d lines, want one per run", len(objs))
	}
	for i, m := range objs {
		if jnum(m["servebench_run"]) != float64(i) || m["label"] != "repeat "+string(rune('1'+i))+" of 3" {
			t.Errorf("line %d: run %v label %v", i, m["servebench_run"], m["label"])
		}
	}

	b.Reset()
	if err := Render(&b, "vllm", Input{Header: header(true), Records: recordsOf(nil)}); err != nil {
		t.Fatal(err)
	}
	m := decodeVLLM(t, b.Bytes())[0]
	checkVLLMKeys(t, strings.TrimSpace(b.String()), m, []string{"ttft", "tpot", "itl", "e2el", "client_queue_time"}, metrics.DefaultPercentiles)
	if m["mean_ttft_ms"] != json.Number("0.0") || !strings.Contains(b.String(), "ttft had no value") {
		t.Errorf("empty run: mean_ttft_ms %v, notes %v", m["mean_ttft_ms"], m["servebench_notes"])
	}
}

// TestVLLMLoadsInPython loads the output with Python's json module, as a script written
// against vLLM's files does, and checks the Python types of a few keys.
func TestVLLMLoadsInPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to load the file with")
	}
	var b bytes.Buffer
	if err := Render(&b, "vllm", fileInput(t, "base.jsonl")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import json, sys
r = json.load(open(sys.argv[1]))
assert isinstance(r["duration"], float) and isinstance(r["completed"], int)
assert all(isinstance(x, float) for x in r["ttfts"]) and all(isinstance(x, list) for x in r["itls"])
assert isinstance(r["mean_ttft_ms"], float) and isinstance(r["max_output_tokens_per_s"], float)
assert r["request_rate"] == "inf" and float(r["request_rate"]) == float("inf")
print("%.2f %d" % (r["mean_ttft_ms"], len(r["input_lens"])))
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), " 24") {
		t.Errorf("python3 printed %q", out)
	}
}

// recordsOf yields recs as a records file's reader would.
func recordsOf(recs []record.Record) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		for i := range recs {
			if !yield(&recs[i], nil) {
				return
			}
		}
	}
}
