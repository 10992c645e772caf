package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpSpeaksWords: no Go type name in any command's --help.
func TestHelpSpeaksWords(t *testing.T) {
	t.Parallel()
	goTypes := regexp.MustCompile(`--[a-z-]+ (float64Slice|durationSlice|FaultList|stringArray|intSlice|float64|int64)\b`)
	for _, c := range []string{"run", "sweep", "sim", "env", "compare", "report", "selftest"} {
		_, out, _ := runMain(t, c, "--help")
		if m := goTypes.FindAllString(out, -1); len(m) > 0 {
			t.Errorf("%s --help shows Go types: %v", c, m)
		}
	}
	_, out, _ := runMain(t, "selftest", "--help")
	if !strings.Contains(out, "--itl durations") {
		t.Errorf("selftest --help: %s", out)
	}
}
