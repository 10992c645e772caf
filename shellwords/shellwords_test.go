package shellwords

import (
	"slices"
	"testing"
)

func TestSplitAndJoin(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`llama-server -m "my model.gguf" -np 4`, []string{"llama-server", "-m", "my model.gguf", "-np", "4"}},
		{`a 'b c' d\ e "f\"g" ''`, []string{"a", "b c", "d e", `f"g`, ""}},
		{"  ", nil},
	} {
		got, err := Split(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if back, _ := Split(Join(got)); !slices.Equal(back, tc.want) {
			t.Errorf("Split(Join(%q)) = %q", got, back)
		}
	}
	if _, err := Split(`a "b`); err == nil {
		t.Error(`Split("a \"b") = nil error, want the unclosed quote`)
	}
}
