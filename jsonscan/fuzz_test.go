package jsonscan

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"testing"
)

// seeds are realistic inputs, one a line: OpenAI-style stream chunks from the servers we
// have transcripts of (llama.cpp, Ollama, vLLM, TGI, error events), then records-file lines
// (a header and two records).
func seeds(tb testing.TB) [][]byte {
	b, err := os.ReadFile("testdata/seeds.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}

// FuzzScanner checks the scanner against encoding/json, the oracle its callers fall back to.
//
//   - Validity: a document (one value, whitespace around it) the scanner accepts must be valid
//     JSON, and valid JSON may be refused only for the reasons the package gives: a key with
//     escapes or non-ASCII bytes, or nesting deeper than MaxDepth.
//   - Values: rebuilt from the scanner's walk (Object, Array, Value's bounds), an accepted
//     document must equal encoding/json's decoding of it (numbers compared as their literals).
//   - Known and Folds: with them set, the scanner accepts exactly the accepted documents in
//     which no object repeats a known key or has a case-folded twin of one.
//   - Int64 and Int: they decode exactly the plain integers of at most 18 digits (and null),
//     to the value encoding/json gives; Int refuses what does not fit an int.
//
// The scanner is deliberately lenient in two places, where only no-panic is asserted: Str
// accepts invalid UTF-8 (as encoding/json does; callers leave such strings to it), and
// Value, Number, Literal, Null and Int64 stop at the end of their value without looking at
// the next byte ("truex", "0123"), leaving the delimiter check to their caller.
func FuzzScanner(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	for _, s := range []string{
		`{"a":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800"}`, `[-0,-0.0,1e23,100000000000000000000000,1E-7,0.5]`,
		`{"a":1,"a":2,"A":3}`, `{"\u0061":1}`, `{"é":1}`, "[\"\xff\"]", `[1,]`, `{"a":01}`, `"\u12"`,
		`999999999999999999`, `1000000000000000000`, `2147483648`, `-9223372036854775809`, ` null `,
		nest(MaxDepth, "[", "", "]"), nest(MaxDepth+1, `{"a":`, "1", "}"), "\t{ \"a\" :\n[ true , false , null ] }\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDocument(t, b)
		checkInts(t, b)
	})
}

func checkDocument(t *testing.T, b []byte) {
	std := json.Valid(b)
	got := document(b)
	if got && !std {
		t.Fatalf("accepted invalid JSON %q", b)
	}
	if std && !got {
		if depth, plain := limits(b); depth <= MaxDepth && plain {
			t.Fatalf("refused valid JSON %q (depth %d, plain keys)", b, depth)
		}
	}

	s := Scanner{B: b}
	var objects [][]string
	v, ok := walk(t, &s, &objects)
	s.WS()
	if ok = ok && s.I == len(b); ok != got {
		t.Fatalf("walking %q with Object and Array: %v, with Value: %v", b, ok, got)
	}
	if got {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json on %q: %v", b, err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("decoding %q: scanner %#v, encoding/json %#v", b, v, want)
		}
	}

	s = Scanner{B: b, Known: fuzzKnown, Folds: fuzzFolds}
	_, ok = s.Value()
	s.WS()
	ok = ok && s.I == len(b)
	if want := got && !conflicts(objects); ok != want {
		t.Fatalf("with Known and Folds, %q: %v, want %v", b, ok, want)
	}
}

// walk rebuilds the value at s as encoding/json's `any` decoding would (json.Number for
// numbers), from the scanner's own walk, and appends each object's keys to objects.
func walk(t *testing.T, s *Scanner, objects *[][]string) (any, bool) {
	s.WS()
	switch {
	case s.I < len(s.B) && s.B[s.I] == '{':
		m := map[string]any{}
		n := len(*objects)
		*objects = append(*objects, nil)
		ok := s.Object(func(key []byte) bool {
			(*objects)[n] = append((*objects)[n], string(key))
			v, ok := walk(t, s, objects)
			m[string(key)] = v // the last of repeated keys wins, as in encoding/json
			return ok
		})
		return m, ok
	case s.I < len(s.B) && s.B[s.I] == '[':
		a := []any{}
		ok := s.Array(func() bool {
			v, ok := walk(t, s, objects)
			a = append(a, v)
			return ok
		})
		return a, ok
	}
	start, ok := s.Value()
	if !ok {
		return nil, false
	}
	raw := s.B[start:s.I]
	switch raw[0] {
	case '"':
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			t.Fatalf("Str accepted %q: %v", raw, err)
		}
		return str, true
	case 't', 'f':
		return raw[0] == 't', true
	case 'n':
		return nil, true
	}
	return json.Number(raw), true
}

// limits reports, for valid JSON b, its nesting depth and whether every key is plain ASCII
// without escapes, as read by encoding/json's tokenizer: the two reasons the scanner may
// refuse valid JSON.
func limits(b []byte) (depth int, plainKeys bool) {
	type frame struct{ object, wantKey bool }
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(b))
	plainKeys = true
	for prev := int64(0); ; {
		tok, err := dec.Token()
		if err != nil {
			return depth, plainKeys // io.EOF after the one value
		}
		// the bytes since the last token: for a key, whitespace, a comma and the quoted key
		raw := b[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		top := len(stack) - 1
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, frame{object: tok == json.Delim('{'), wantKey: true})
			depth = max(depth, len(stack))
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		default:
			if top >= 0 && stack[top].object && stack[top].wantKey {
				plainKeys = plainKeys && bytes.IndexFunc(raw, func(r rune) bool { return r == '\\' || r >= 0x80 }) < 0
				stack[top].wantKey = false
				continue
			}
		}
		// a value ended: an enclosing object wants a key next
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
}

var fuzzKeys = []string{"id", "phase", "choices", "usage", "text", "content", "a"}

func fuzzKnown(key []byte) (uint, bool) {
	for i, k := range fuzzKeys {
		if string(key) == k {
			return uint(i), true
		}
	}
	return 0, false
}

func fuzzFolds(key []byte) bool {
	for _, k := range fuzzKeys {
		if string(key) != k && bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// conflicts reports whether some object repeats a known key or has a case-folded twin of one.
func conflicts(objects [][]string) bool {
	for _, keys := range objects {
		seen := map[string]bool{}
		for _, k := range keys {
			if _, known := fuzzKnown([]byte(k)); known && seen[k] || fuzzFolds([]byte(k)) {
				return true
			}
			seen[k] = true
		}
	}
	return false
}

// plainInt is what Int64 decodes: whitespace, then null or an integer of at most 18 digits
// without a leading zero, not continued by another digit, a fraction or an exponent.
var plainInt = regexp.MustCompile(`^[ \t\r\n]*(null|-?(0|[1-9][0-9]{0,17})([^0-9.eE]|$))`)

func checkInts(t *testing.T, b []byte) {
	want := plainInt.Match(b)
	s, v := Scanner{B: b}, int64(-7)
	ok := s.Int64(&v)
	if ok != want {
		t.Fatalf("Int64(%q) = %v, want %v", b, ok, want)
	}
	if w := int64(-7); ok && (json.Unmarshal(b[:s.I], &w) != nil || w != v) {
		t.Fatalf("Int64(%q) = %d, encoding/json: %d", b, v, w)
	}

	s, n := Scanner{B: b}, -7
	ok = s.Int(&n)
	if ok && !want {
		t.Fatalf("Int(%q) accepted what Int64 refuses", b)
	}
	if w := -7; ok && (json.Unmarshal(b[:s.I], &w) != nil || w != n) {
		t.Fatalf("Int(%q) = %d, encoding/json: %d", b, n, w)
	}
	if !ok && want {
		// only an integer that does not fit an int may be refused; encoding/json refuses it too
		var w int
		if m := plainInt.FindSubmatch(b); json.Unmarshal(m[0][:len(m[0])-len(m[3])], &w) == nil {
			t.Fatalf("Int(%q) refused what fits an int (%d)", b, w)
		}
	}
}
