package cli

import (
	"bufio"
	"encoding/json"
	"html"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"servebench/internal/peertest"
	"servebench/record"
	"servebench/selftest"
)

// selfSim is the command line of a `servebench sim` that this test binary runs (TestMain runs
// Main when selftest.ChildEnv is set: the sweep passes it with --server-env).
func selfSim(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe + " sim --addr 127.0.0.1:{port} --seed 1"
}

// readIndex reads a configuration sweep's STEM.configs.json.
func readIndex(t *testing.T, path string) *record.ConfigSweep {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var idx record.ConfigSweep
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	return &idx
}

// answerRE reads the figures of the answer's sentence.
var answerRE = regexp.MustCompile(`^answer +of (\d+) server configurations(?: \((\d+) failed\))?, (\S+) (?:serves|saturates at) (\d+) users? at once \(([0-9.]+) req/s, ([0-9]+) output tok/s\)`)

// TestConfigSweepStartsEachServer sweeps five configurations of real simulator processes:
// two that serve (their batching flag differs), one whose command exits at once, one that
// never answers and one that dies during its points. Each failure is recorded by name and
// the sweep goes on; the report opens with the answer, whose figures are the table's cells;
// the frontier leaves out the dead server's points; compare of the two that served names the
// flag.
func TestConfigSweepStartsEachServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim := selfSim(t) + " --ttft 20ms --itl 4ms"
	p := filepath.Join(dir, "s.jsonl")
	code, out, errs := runMain(t, "sweep", "-q", "--server-cmd", "{args}", "--server-env", selftest.ChildEnv+"=1",
		"--server-config", "seqs1: "+sim+" --max-num-seqs 1", "--server-config", "seqs4: "+sim+" --max-num-seqs 4",
		"--server-config", "exits: "+sim+" --no-such-flag", "--server-config", "never: sleep 30 {port}",
		"--server-config", "dies: timeout 1.5 "+sim, "--ready-timeout", "5s",
		"--concurrency", "1,4", "--duration", "1s", "--input-tokens", "16", "--output-tokens", "8", "-o", p)
	if code != 1 || !strings.Contains(errs, "3 of 5 server configurations failed: exits, never, dies") {
		t.Fatalf("exit %d, want 1 naming the failed configurations: %s", code, errs)
	}
	idx := readIndex(t, filepath.Join(dir, "s.configs.json"))
	stages, diedWithPoints := map[string]string{}, false
	for _, c := range idx.Configs {
		// under -race the workload's build may outlast the dying server's 1.5 s: no point
		diedWithPoints = diedWithPoints || (c.Name == "dies" && c.Records != "")
		stages[c.Name] = c.FailureStage
		if _, err := os.Stat(c.Log); err != nil {
			t.Errorf("%s: no server log: %v", c.Name, err)
		}
		if c.FailureStage == "" && (c.ReadySeconds <= 0 || c.Records == "") {
			t.Errorf("%s: served, but ready after %v s, records %q", c.Name, c.ReadySeconds, c.Records)
		}
	}
	want := map[string]string{"seqs1": "", "seqs4": "", "exits": "start", "never": "ready", "dies": "run"}
	for k, v := range want {
		if stages[k] != v {
			t.Errorf("configuration %s: failure stage %q, want %q (all: %v)", k, stages[k], v, stages)
		}
	}
	if !strings.Contains(out, "unknown flag: --no-such-flag") {
		t.Errorf("the failed start does not show its log's last lines:\n%s", out)
	}
	// the answer is the first line, and its figures are its configuration's row in the table
	m := answerRE.FindStringSubmatch(out)
	if m == nil || m[1] != "5" || m[2] != "3" {
		t.Fatalf("first line is not the answer:\n%s", out)
	}
	row := regexp.MustCompile(`(?m)^  \d+ +concurrency ` + m[4] + ` +` + regexp.QuoteMeta(m[5]) + ` +` + m[6] + ` `)
	section := out[strings.Index(out, "config      "+m[3]):]
	if !row.MatchString(section) {
		t.Errorf("the answer's %s users, %s req/s, %s tok/s are not %s's row:\n%s", m[4], m[5], m[6], m[3], section)
	}
	if !strings.Contains(out, "pick        "+m[3]+": ") {
		t.Errorf("the pick is not the answer's configuration %s:\n%s", m[3], out)
	}
	if regexp.MustCompile(`(?m)^  dies .*frontier$`).MatchString(out) || (diedWithPoints && !strings.Contains(out, "left out: its server died during the run")) {
		t.Errorf("the dead server's points are on the frontier:\n%s", out)
	}
	// report of the index prints what sweep printed, and the page opens with the same answer
	index := filepath.Join(dir, "s.configs.json")
	if code, rep, errs := runMain(t, "report", index); code != 0 || rep != out {
		t.Errorf("report of the index: exit %d %s; differs from what sweep printed:\n%s\n---\n%s", code, errs, rep, out)
	}
	first, _, _ := strings.Cut(out, "\n")
	answer := strings.TrimSpace(strings.TrimPrefix(first, "answer"))
	if code, page, errs := runMain(t, "report", index, "--format", "html"); code != 0 ||
		!strings.Contains(page, `<main>`+"\n"+`<p class="answer" id="answer"><b>Answer:</b> `+html.EscapeString(answer)+`</p>`) {
		t.Errorf("the page does not open with the answer %q: exit %d %s", answer, code, errs)
	} else {
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if ids[m[1]] {
				t.Errorf("the page has two elements with id %q", m[1])
			}
			ids[m[1]] = true
		}
	}
	if code, _, errs := runMain(t, "report", index, "--format", "csv"); code != 2 {
		t.Errorf("report --format csv of the index: exit %d, want 2: %s", code, errs)
	}
	code, cmp, _ := runMain(t, "compare", filepath.Join(dir, "s.seqs1.jsonl"), filepath.Join(dir, "s.seqs4.jsonl"))
	if code != 5 || !strings.Contains(cmp, "launch.flag.max-num-seqs") {
		t.Errorf("compare of the two configurations: exit %d, want 5 naming launch.flag.max-num-seqs:\n%s", code, cmp)
	}
}

// TestConfigSweepInterruptStopsServer: Ctrl-C during a configuration's points stops the
// server that sweep started (its process, by PID, is gone once servebench has exited).
func TestConfigSweepInterruptStopsServer(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	cmd := servebench(t, "sweep", "--server-cmd", selfSim(t)+" --ttft 20ms --itl 20ms", "--server-env", selftest.ChildEnv+"=1",
		"--concurrency", "2", "--duration", "60s", "--input-tokens", "16", "--output-tokens", "50", "-o", p)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pidRE := regexp.MustCompile(`ready after .* \(pid (\d+)\)`)
	pid, sending := 0, false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !sending {
		if m := pidRE.FindStringSubmatch(sc.Text()); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		sending = pid > 0 && strings.HasPrefix(sc.Text(), "point 1/1")
	}
	if !sending {
		t.Fatal("the sweep never said its server's pid and first point")
	}
	go func() { // drain, so that the child never blocks on a full pipe
		for sc.Scan() {
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	wait(t, cmd)
	if running(pid) {
		t.Errorf("server pid %d still runs after the interrupted sweep exited", pid)
	}
}

// running reports whether pid runs (an exited process not yet reaped does not).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(b), ") Z ")
}

// TestConfigSweepLlamaSlots sweeps two configurations of a real llama.cpp server, -np 1 and
// 4, at two loads each: each one is started, becomes ready and is stopped; the report shows
// each one's time to ready, the frontier and the pick; compare of the two names the flag.
// (A third configuration, -np 2, added a server start and two points and checked nothing
// the two do not.)
func TestConfigSweepLlamaSlots(t *testing.T) {
	t.Parallel()
	cmd := peertest.LlamaCommand(t, "mini.gguf") + " -t 1 -c 4096 --metrics"
	dir := t.TempDir()
	p := filepath.Join(dir, "np.jsonl")
	code, out, errs := runMain(t, "sweep", "-q", "--server-cmd", cmd, "--server-config", "np1: -np 1",
		"--server-config", "np4: -np 4", "--concurrency", "1,4", "--requests", "8", "--input-tokens", "64", "--output-tokens", "16",
		"--slo", "ttft=2s", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{"answer ", "ready after", "frontier", "pick        np"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	idx := readIndex(t, filepath.Join(dir, "np.configs.json"))
	if len(idx.Configs) != 2 {
		t.Fatalf("%d configurations in the index", len(idx.Configs))
	}
	for _, c := range idx.Configs {
		if c.Failure != "" || c.ReadySeconds <= 0 {
			t.Errorf("%s: failure %q, ready after %v s", c.Name, c.Failure, c.ReadySeconds)
		}
	}
	code, cmp, _ := runMain(t, "compare", filepath.Join(dir, "np.np1.jsonl"), filepath.Join(dir, "np.np4.jsonl"))
	if code != 5 || !regexp.MustCompile(`launch\.flag\.np +1 +4`).MatchString(cmp) {
		t.Errorf("compare of -np 1 and -np 4: exit %d, want 5 naming launch.flag.np:\n%s", code, cmp)
	}
}

// TestQuickFindsLlama: quick looks at the ports it is given in order, finds the llama.cpp
// server on the second, names it and its model, and answers in one sentence; with nothing
// listening it says where it looked.
func TestQuickFindsLlama(t *testing.T) {
	t.Parallel()
	url := peertest.Llama(t, "mini.gguf", "-t", "1", "-np", "2", "-c", "4096")
	port := url[strings.LastIndex(url, ":")+1:]
	closed := strconv.Itoa(freeTCPPort(t))
	start := time.Now()
	code, out, errs := runMain(t, "quick", "--probe", "vLLM="+closed, "--probe", "llama.cpp="+port, "--concurrency", "1,2",
		"--point-duration", "1s", "-o", filepath.Join(t.TempDir(), "q.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	took := time.Since(start)
	if !strings.Contains(errs, "found a server at "+url+", the usual port of llama.cpp; it speaks llamacpp") || !strings.Contains(errs, "model ") {
		t.Errorf("quick does not name the server and its model:\n%s", errs)
	}
	if !strings.HasPrefix(out, "answer      this server serves ") && !strings.HasPrefix(out, "answer      this server serves no") {
		t.Errorf("first line is not the answer:\n%s", out)
	}
	t.Logf("quick took %v with 1 s points", took)
	code, _, errs = runMain(t, "quick", "--probe", "vLLM="+closed)
	if code != 1 || !strings.Contains(errs, "no server answers on loopback at vLLM "+closed) {
		t.Errorf("nothing listening: exit %d: %s", code, errs)
	}
}

// freeTCPPort is a loopback port nothing listens on.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRunServerCmdLike: run --server-cmd starts, measures and stops one server, records its
// command and environment (a credential-like value redacted, never written), and run --like
// of that file starts the same command again.
func TestRunServerCmdLike(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, cand := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	code, _, errs := runMain(t, "run", "--server-cmd", selfSim(t)+" --ttft 10ms --itl 2ms", "--server-env", selftest.ChildEnv+"=1",
		"--server-env", "HF_TOKEN=hf_secret_value", "--requests", "8", "--concurrency", "2", "--input-tokens", "16", "--output-tokens", "4", "-o", base)
	if code != 0 || !strings.Contains(errs, "server ready after") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(base)
	if strings.Contains(string(b), "hf_secret_value") || !strings.Contains(string(b), `"HF_TOKEN=REDACTED"`) {
		t.Errorf("the records hold the secret, or no redacted HF_TOKEN")
	}
	if _, err := os.Stat(filepath.Join(dir, "a.server.log")); err != nil {
		t.Errorf("no server log beside the records: %v", err)
	}
	code, _, errs = runMain(t, "run", "--like", base, "-o", cand)
	if code != 0 || !strings.Contains(errs, "server ready after") {
		t.Fatalf("run --like: exit %d: %s", code, errs)
	}
	h, _ := readRecords(t, cand)
	if cmd, _ := h.Config["server_cmd"].(string); !strings.HasSuffix(cmd, " sim --addr 127.0.0.1:{port} --seed 1 --ttft 10ms --itl 2ms") {
		t.Errorf("run --like recorded server_cmd %q", cmd)
	}
}
