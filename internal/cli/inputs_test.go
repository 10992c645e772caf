package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/sim"
)

// TestHostileInputs: every input file or flag that is endless, empty, out of range or not a
// number ends before any request with one line naming it and the README's exit code, within
// a generous bound; and the inputs that are valid but odd (a BOM, a huge block size, a
// million groups for three requests) run.
func TestHostileInputs(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bom := "\xEF\xBB\xBF"
	conv := `{"id":"%d","conversations":[{"from":"human","value":"what is the best way to serve a model"},{"from":"gpt","value":"with a server that batches requests well"}]}`
	var convs []string
	for i := range 4 {
		convs = append(convs, fmt.Sprintf(conv, i))
	}
	sharegpt := "[" + strings.Join(convs, ",") + "]"
	burst := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,20,5,25,x\n1,ChatGPT,30,6,36,x\n"
	run := []string{"run", "-q", "--url", url, "--warmup", "0", "--requests", "2", "-o"}
	out := func() string { return filepath.Join(t.TempDir(), "r.jsonl") }
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"sharegpt zero", []string{"--dataset", "sharegpt:/dev/zero"}, exitcode.Usage, "not a JSON array"},
		{"sharegpt urandom", []string{"--dataset", "sharegpt:/dev/urandom"}, exitcode.Usage, "/dev/urandom"},
		{"mooncake zero", []string{"--dataset", "mooncake:/dev/zero"}, exitcode.Usage, "record too long"},
		{"prompts zero", []string{"--prompts", "/dev/zero"}, exitcode.Usage, "zero"},
		{"trace zero", []string{"--trace", "/dev/zero"}, exitcode.Usage, "--trace"},
		{"config zero", []string{"--config", "/dev/zero"}, exitcode.Usage, "over the 1MiB limit"},
		{"conditions zero", []string{"--conditions", "/dev/zero"}, exitcode.Usage, "larger than 1 MiB"},
		{"tokenizer zero", []string{"--tokenizer", "/dev/zero"}, exitcode.Usage, "--tokenizer"},
		{"over --max-input", []string{"--dataset", "sharegpt:" + file("big.json", sharegpt), "--max-input", "100B"}, exitcode.Usage, "over the 100B limit"},
		{"bad --max-input", []string{"--max-input", "12 parsecs"}, exitcode.Usage, "--max-input"},
		{"empty sharegpt array", []string{"--dataset", "sharegpt:" + file("empty.json", " [ ] ")}, exitcode.Usage, "no requests"},
		{"empty mooncake", []string{"--dataset", "mooncake:" + file("empty.jsonl", "")}, exitcode.Usage, "no requests"},
		{"blank mooncake", []string{"--dataset", "mooncake:" + file("blank.jsonl", "\n  \n\t\n")}, exitcode.Usage, "no requests"},
		{"header-only burstgpt", []string{"--dataset", "burstgpt:" + file("head.csv", "Timestamp,Request tokens,Response tokens\n")}, exitcode.Usage, "no requests"},
		{"too few conversations", []string{"--dataset", "sharegpt:" + file("few.json", sharegpt), "--requests", "50"}, exitcode.Usage, "fewer than the 50 asked for"},
		{"sharegpt type error", []string{"--dataset", "sharegpt:" + file("type.json", `[{"conversations": "hi"}]`)}, exitcode.Usage, "want an array, found a JSON string"},
		{"mooncake 1e13 ms", []string{"--dataset", "mooncake:" + file("t13.jsonl",
			`{"timestamp": 0, "input_length": 20, "output_length": 4}`+"\n"+`{"timestamp": 1e13, "input_length": 20, "output_length": 4}`)}, exitcode.Usage, `t13.jsonl:2: "timestamp"`},
		{"mooncake 1e300 ms", []string{"--dataset", "mooncake:" + file("t300.jsonl",
			`{"timestamp": 0, "input_length": 20, "output_length": 4}`+"\n"+`{"timestamp": 1e300, "input_length": 20, "output_length": 4}`)}, exitcode.Usage, `t300.jsonl:2: "timestamp"`},
		{"trace 1e13 s", []string{"--trace", file("t.jsonl", `{"t": 0}`+"\n"+`{"t": 1e13}`)}, exitcode.Usage, "t.jsonl:2"},
		{"--block-tokens 2^62", []string{"--dataset", "mooncake:" + file("h3.jsonl", `{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [1, 2, 3]}`),
			"--block-tokens", "4611686018427387904"}, exitcode.Usage, "--block-tokens"},
		{"--block-tokens 2^40", []string{"--dataset", "mooncake:" + filepath.Join(dir, "h3.jsonl"), "--block-tokens", "1099511627776"}, exitcode.Usage, "--block-tokens"},
		{"--input-tokens 2^40", []string{"--input-tokens", "1099511627776"}, exitcode.Usage, "--input-tokens"},
		{"--requests overflow", []string{"--requests", "9223372036854775807", "--warmup", "1"}, exitcode.Usage, "--requests"},
		{"--temperature Inf", []string{"--temperature", "Inf"}, exitcode.Usage, "--temperature"},
		{"--temperature -Inf", []string{"--temperature", "-Inf"}, exitcode.Usage, "--temperature"},
		{"--temperature NaN", []string{"--temperature", "NaN"}, exitcode.Usage, "--temperature"},
		{"--top-p Inf", []string{"--top-p", "+Inf"}, exitcode.Usage, "--top-p"},
		{"--rate NaN", []string{"--rate", "NaN"}, exitcode.Usage, "--rate"},
		{"--range-ratio NaN", []string{"--range-ratio", "NaN"}, exitcode.Usage, "--range-ratio"},
		{"--burstiness Inf", []string{"--rate", "1", "--burstiness", "Inf"}, exitcode.Usage, "--burstiness"},
		{"--warmup-tolerance NaN", []string{"--warmup-tolerance", "NaN"}, exitcode.Usage, "--warmup-tolerance"},
		// valid, if odd: these run
		{"burstgpt with a BOM", []string{"--dataset", "burstgpt:" + file("bom.csv", bom+burst)}, exitcode.OK, ""},
		{"sharegpt with a BOM", []string{"--dataset", "sharegpt:" + file("bom.json", bom+sharegpt)}, exitcode.OK, ""},
		{"mooncake with a BOM", []string{"--dataset", "mooncake:" + file("bom.jsonl", bom+`{"timestamp": 0, "input_length": 20, "output_length": 4}`)}, exitcode.OK, ""},
		{"--block-tokens 16000000", []string{"--dataset", "mooncake:" + file("h1.jsonl", `{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [7]}`),
			"--block-tokens", "16000000", "--requests", "1"}, exitcode.OK, ""},
		{"a million groups, three requests", []string{"--prefix-groups", "1000000", "--prefix-tokens", "20", "--input-tokens", "40", "--requests", "3"}, exitcode.OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			args := append(append(append([]string{}, run...), out()), tc.args...)
			code, _, errs := runMain(t, args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.want)
			}
			if tc.code != exitcode.OK && oneError(errs) == "" {
				t.Errorf("not one error line: %q", errs)
			}
			for _, bad := range []string{"goroutine ", "panic", "struct {", "[]struct", "float64", "int64"} {
				if strings.Contains(errs, bad) {
					t.Errorf("stderr shows %q: %q", bad, errs)
				}
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	if code, _, errs := runMain(t, "compare", "--threshold", "NaN", "a.jsonl", "b.jsonl"); code != exitcode.Usage || !strings.Contains(errs, "--threshold") {
		t.Errorf("compare --threshold NaN: exit %d: %q", code, errs)
	}
	for _, v := range []string{"NaN", "-1", "100"} {
		if code, _, errs := runMain(t, "report", "--threshold", v, "a.jsonl", "b.jsonl", "--format", "html"); code != exitcode.Usage || !strings.Contains(errs, "--threshold") {
			t.Errorf("report --threshold %s: exit %d: %q", v, code, errs)
		}
	}
}

// oneError returns the one error line of stderr ("" when there is not exactly one): the
// rest may only be the notice that building the workload is slow (a loaded machine).
func oneError(stderr string) string {
	var errs []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "building the workload: ") {
			errs = append(errs, l)
		}
	}
	if len(errs) != 1 {
		return ""
	}
	return errs[0]
}

// TestDatasetFromPipe: a dataset is read once, hashed while parsed, so a pipe (what
// `--dataset sharegpt:<(cat f)` gives) works and the header's sha256 is the file's.
func TestDatasetFromPipe(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	dir := t.TempDir()
	ds := filepath.Join(dir, "sharegpt.json")
	writeShareGPT(t, ds, 50)
	content, _ := os.ReadFile(ds)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write(content); w.Close() }()
	p := filepath.Join(dir, "r.jsonl")
	fd := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(fd); err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--dataset", "sharegpt:"+fd, "--requests", "5", "--warmup", "0", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, _ := readRecords(t, p)
	sum := sha256.Sum256(content)
	if want := "sha256:" + hex.EncodeToString(sum[:]); h.Workload.DatasetSHA256 != want {
		t.Errorf("dataset sha256 %s, want the file's %s", h.Workload.DatasetSHA256, want)
	}
}

// TestFIFOWithoutWriterStopsOnCtrlC: a FIFO nobody writes blocks its open; Ctrl-C (the
// context) still ends the run at once, with one line and exit 130, and a writer that comes
// later finds nobody blocked.
func TestFIFOWithoutWriterStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	for _, flag := range []string{"--dataset", "--prompts", "--trace", "--config"} {
		t.Run(flag, func(t *testing.T) {
			fifo := filepath.Join(dir, strings.TrimPrefix(flag, "--"))
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			val := fifo
			if flag == "--dataset" {
				val = "sharegpt:" + fifo
			}
			// Ctrl-C once the run waits on the FIFO: after the server's readiness and its model
			// list, which on a busy machine (tests side by side) took more than 300 ms
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(2*time.Second, cancel)
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := Main(ctx, []string{"run", "-q", "--url", url, flag, val, "-o", filepath.Join(dir, flag+".jsonl")}, strings.NewReader(""), &stdout, &stderr)
			errs := stderr.String()
			if code != exitcode.Interrupted || !strings.Contains(oneError(errs), "interrupted") {
				t.Errorf("exit %d, stderr %q; want %d and one line", code, errs, exitcode.Interrupted)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v after Ctrl-C", d)
			}
		})
	}
}
