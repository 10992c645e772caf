package report

import (
	"bytes"
	"strings"
	"testing"
)

// A model path wraps at its separators, never inside a word: the pages give it a break
// opportunity after each "/" and no rule that breaks a word anywhere, on the run page and
// on the compare page.
func TestModelPathWrapsAtSeparators(t *testing.T) {
	const model = "/models/Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf"
	if got, want := string(wrapAtSeparators(model)), "/<wbr>models/<wbr>Qwen/<wbr>Qwen2.5-0.5B-Instruct-GGUF/<wbr>qwen2.5-0.5b-instruct-q4_k_m.gguf"; got != want {
		t.Errorf("wrap = %s, want %s", got, want)
	}
	if got := string(wrapAtSeparators("a<b>/c")); got != "a&lt;b&gt;/<wbr>c" {
		t.Errorf("wrap does not escape: %s", got)
	}
	run := synthRun(1, 40, 80, "base")
	run.Header.Target.Model = model
	cand := synthRun(2, 40, 90, "cand")
	cand.Header.Target.Model = model
	var one, two bytes.Buffer
	if err := HTMLRuns(&one, []Run{run}); err != nil {
		t.Fatal(err)
	}
	base, candSide := synthSide(1, 2, 40, 100, 20, "base", nil), synthSide(2, 2, 40, 110, 22, "cand", nil)
	base.Header.Target.Model, candSide.Header.Target.Model = model, model
	if err := Render(&two, "html", base, candSide); err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string]string{"run page": one.String(), "compare page": two.String()} {
		if !strings.Contains(page, string(wrapAtSeparators(model))) {
			t.Errorf("%s: the model path has no break after its separators", name)
		}
		if strings.Contains(page, "overflow-wrap:anywhere") || strings.Contains(page, "word-break:break-word") {
			t.Errorf("%s: a rule breaks words anywhere", name)
		}
	}
}
