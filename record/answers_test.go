package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The answer fields encode as encoding/json does and decode on the fast path as
// json.Unmarshal does, unset fields left out.
func TestAnswerFieldsRoundTrip(t *testing.T) {
	yes, no := true, false
	for _, r := range []*Record{
		{Phase: PhaseMeasure, Correct: &yes},
		{Phase: PhaseMeasure, Correct: &no, Answer: "The answer is \"C\" é\n", Expected: "choice B", Status: 200},
		{Phase: PhaseMeasure, SchemaValid: &no, SchemaError: "at /answer: got number, want string", Answer: `{"answer":12345}`},
		{Phase: PhaseMeasure, Correct: &yes, SchemaValid: &yes, Images: 1},
	} {
		line := encodeFast(t, r)
		if want := viaJSON(t, r); !bytes.Equal(line, want) {
			t.Errorf("encode differs:\n got %s\nwant %s", line, want)
		}
		var fast, slow Record
		if !decodeFast(bytes.TrimSpace(line), &fast) {
			t.Fatalf("the fast path gave up on %s", line)
		}
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) || !reflect.DeepEqual(fast.Correct, r.Correct) || fast.SchemaError != r.SchemaError || fast.Expected != r.Expected {
			t.Errorf("decoded %+v, json.Unmarshal %+v, want %+v", fast, slow, r)
		}
	}
	var null Record
	if !decodeFast([]byte(`{"id":1,"phase":"measure","scheduled":0,"dispatched":0,"prompt_tokens":0,"output_tokens":0,"correct":null}`), &null) || null.Correct != nil {
		t.Error(`"correct": null must leave it unset`)
	}
}

func TestRightAndClip(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		r    Record
		want bool
	}{
		{Record{}, false}, {Record{Correct: &yes}, true}, {Record{Correct: &no}, false},
		{Record{SchemaValid: &yes}, true}, {Record{Correct: &yes, SchemaValid: &no}, false},
	} {
		if got := tc.r.Right(); got != tc.want {
			t.Errorf("%+v: Right() = %v, want %v", tc.r, got, tc.want)
		}
	}
	long := strings.Repeat("é", MaxAnswerBytes)
	if c := ClipAnswer(long); len(c) > MaxAnswerBytes+len("…") || !utf8.ValidString(c) || !strings.HasSuffix(c, "…") {
		t.Errorf("ClipAnswer: %d bytes, valid %v", len(c), utf8.ValidString(c))
	}
}
