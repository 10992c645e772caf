package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/exitcode"
	"servebench/record"
	"servebench/runspec"
	"servebench/workload"
)

// TestRecipeLikeRoundTrip: a synthetic run's header carries its prompts as a recipe (no
// text), --like rebuilds exactly the prompts the baseline sent (the saved workloads are the
// same bytes, and the recipe's sha256 is the saved file's), a baseline from before recipes
// (its prompts embedded as text) replays as it did, and a recipe that does not rebuild its
// hash is refused with a usage error in one line.
//
// Not parallel: its lazy case sets the package variable workload.LazyBytes, which every other
// run reads (the race detector caught it beside the parallel tests).
func TestRecipeLikeRoundTrip(t *testing.T) {
	t.Run("text kept", testRecipeLikeRoundTrip)
	t.Run("lazy", func(t *testing.T) {
		// every prompt kept as its recipe only, its text rebuilt as it is sent, as 1,000
		// prompts of 128k tokens are
		defer func(b float64) { workload.LazyBytes = b }(workload.LazyBytes)
		workload.LazyBytes = 0
		testRecipeLikeRoundTrip(t)
	})
}

func testRecipeLikeRoundTrip(t *testing.T) {
	url := startSim(t, nil) // the engine model: it reports the prompt tokens it counted
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	run := func(args ...string) (int, string) {
		t.Helper()
		code, _, errs := runMain(t, append([]string{"run", "-q", "--url", url}, args...)...)
		return code, errs
	}
	if code, errs := run("--input-tokens", "300", "--range-ratio", "0.5", "--output-tokens", "3", "--requests", "6", "--concurrency", "2",
		"--repeat", "2", "--save-workload", p("base-w.jsonl"), "-o", p("base.jsonl")); code != 0 {
		t.Fatalf("base: exit %d: %s", code, errs)
	}
	bh, recs := readRecords(t, p("base.jsonl"))
	sentExact(t, recs)
	if len(bh.Workload.Requests) != 0 || len(bh.Workload.Recipe) == 0 {
		t.Fatalf("header: %d bytes of prompt text, %d of recipe; want a recipe only", len(bh.Workload.Requests), len(bh.Workload.Recipe))
	}
	saved, err := os.ReadFile(p("base-w.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rc workload.HeaderRecipe
	if err := json.Unmarshal(bh.Workload.Recipe, &rc); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(saved); rc.SHA256 != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("recipe sha256 %s is not the saved workload's", rc.SHA256)
	}

	if code, errs := run("--like", p("base.jsonl"), "--save-workload", p("like-w.jsonl"), "-o", p("like.jsonl")); code != 0 {
		t.Fatalf("like: exit %d: %s", code, errs)
	}
	lh, lrecs := readRecords(t, p("like.jsonl"))
	sentExact(t, lrecs)
	again, err := os.ReadFile(p("like-w.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, again) || lh.Workload.Hash != bh.Workload.Hash || string(lh.Workload.Recipe) != string(bh.Workload.Recipe) {
		t.Errorf("the --like replay sent other prompts (hash %s, baseline %s)", lh.Workload.Hash, bh.Workload.Hash)
	}

	// a baseline written before recipes: the same prompts embedded as text
	reqs, err := rc.Requests()
	if err != nil {
		t.Fatal(err)
	}
	old := rewriteHeader(t, p("base.jsonl"), p("old.jsonl"), func(h map[string]any) {
		w := h["workload"].(map[string]any)
		delete(w, "recipe")
		raw, err := runspec.EncodeRequests(reqs)
		if err != nil {
			t.Fatal(err)
		}
		w["requests"] = json.RawMessage(raw)
	})
	if code, errs := run("--like", old, "--save-workload", p("old-w.jsonl"), "-o", p("old-like.jsonl")); code != 0 {
		t.Fatalf("like of an old file: exit %d: %s", code, errs)
	}
	oh, _ := readRecords(t, p("old-like.jsonl"))
	fromOld, _ := os.ReadFile(p("old-w.jsonl"))
	if !bytes.Equal(saved, fromOld) || oh.Workload.Hash != bh.Workload.Hash {
		t.Errorf("an old file's embedded prompts replay as other prompts (hash %s, baseline %s)", oh.Workload.Hash, bh.Workload.Hash)
	}

	// a recipe that rebuilds other text than its hash says
	bad := rewriteHeader(t, p("base.jsonl"), p("bad.jsonl"), func(h map[string]any) {
		r := h["workload"].(map[string]any)["recipe"].(map[string]any)
		r["sha256"] = "sha256:" + strings.Repeat("0", 64)
	})
	code, errs := run("--like", bad, "-o", p("bad-like.jsonl"))
	if code != exitcode.Usage || !strings.Contains(errs, "recipe") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("a recipe that does not match its hash: exit %d, want %d and one line naming the recipe: %q", code, exitcode.Usage, errs)
	}
}

// sentExact checks that the server counted every prompt at the length it was built to (the
// prompts were built with the simulator's tokenizer): the text was sent, not left out.
func sentExact(t *testing.T, recs []record.Record) {
	t.Helper()
	for _, r := range recs {
		if r.PromptTokens != r.InputTokens || r.InputTokens == 0 || r.PromptTokensSource != record.SourceServer {
			t.Fatalf("request %d: %d prompt tokens (source %q), the workload built %d", r.ID, r.PromptTokens, r.PromptTokensSource, r.InputTokens)
		}
	}
}

// rewriteHeader copies the records file in to out with its header edited by edit.
func rewriteHeader(t *testing.T, in, out string, edit func(map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	var line map[string]map[string]any
	if err := json.Unmarshal(first, &line); err != nil {
		t.Fatal(err)
	}
	edit(line["servebench_header"])
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line); err != nil {
		t.Fatal(err)
	}
	w.Write(rest)
	w.Flush()
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
