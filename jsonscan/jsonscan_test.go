package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// document reports whether b is exactly one JSON value, with optional whitespace around it:
// the way both callers use the scanner (a value, then nothing but whitespace).
func document(b []byte) bool {
	s := Scanner{B: b}
	if _, ok := s.Value(); !ok {
		return false
	}
	s.WS()
	return s.I == len(s.B)
}

// nest wraps inner in n levels of open…close.
func nest(n int, open, inner, close string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// TestDocument checks whole-document validity against hand-written answers, and against
// json.Valid except where the scanner refuses on purpose (so its callers fall back).
func TestDocument(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
		// refuses marks valid JSON the scanner refuses by design: escaped or non-ASCII
		// keys, nesting beyond MaxDepth.
		refuses bool
	}{
		// literals and whitespace everywhere
		{"true", true, false}, {"false", true, false}, {"null", true, false},
		{" \t\r\n null \t\r\n", true, false}, {"nul", false, false}, {"nulll", false, false},
		{"True", false, false}, {"NULL", false, false}, {"tru e", false, false}, {"t", false, false},
		{"", false, false}, {"   ", false, false}, {"\v1", false, false}, {"\f1", false, false},
		{"\u00a01", false, false}, {"\xef\xbb\xbf1", false, false}, // no NBSP, no byte-order mark
		// numbers
		{"0", true, false}, {"-0", true, false}, {"-0.0", true, false}, {"1e23", true, false},
		{"100000000000000000000000", true, false}, {"-12.5E-3", true, false}, {"1E+2", true, false},
		{"99999999999999999999999999999999", true, false}, {"1e400", true, false},
		{"01", false, false}, {"-01", false, false}, {"00", false, false}, {"+1", false, false},
		{"-", false, false}, {"1.", false, false}, {".5", false, false}, {"1.e3", false, false},
		{"1e", false, false}, {"1e+", false, false}, {"1E-", false, false}, {"0x10", false, false},
		{"1_000", false, false}, {"NaN", false, false}, {"Infinity", false, false}, {"--1", false, false},
		{"- 1", false, false}, {"1 2", false, false},
		// strings
		{`""`, true, false}, {`"a\"b"`, true, false}, {`"a\\"`, true, false}, {`"\\\""`, true, false},
		{`"\/\b\f\n\r\t"`, true, false}, {`"\u00e9\u00E9"`, true, false}, {`"\ud83d\ude00"`, true, false},
		{`"\ud800"`, true, false}, {`"\udc00\ud800"`, true, false}, // lone surrogates: valid JSON
		{"\"\xff\xfe\"", true, false}, {"\"é😀\"", true, false}, // invalid UTF-8 is accepted, as json.Valid does
		{`"\u00e"`, false, false}, {`"\u00eg"`, false, false}, {`"\U00e9"`, false, false}, {`"\x41"`, false, false},
		{`"\'"`, false, false}, {`"\`, false, false}, {`"\"`, false, false}, {`"a`, false, false},
		{"\"a\x00b\"", false, false}, {"\"a\nb\"", false, false}, {"\"\x1f\"", false, false},
		{"\"\x7f\"", true, false}, {"'a'", false, false},
		// arrays and objects, nested ones skipped correctly
		{"[]", true, false}, {"[ ]", true, false}, {"{}", true, false}, {"{ }", true, false},
		{`[1,"a",true,null,{},[]]`, true, false}, {` [ 1 , [ 2 , [ 3 ] ] ] `, true, false},
		{`{"a":{"b":{"c":[1,{"d":"}"}]}},"e":"]"}`, true, false}, {`{"a" : 1 , "b" : [ ] }`, true, false},
		{`{"a":1,"a":2}`, true, false}, // repeated keys are fine without Known
		{"[1,]", false, false}, {"[,1]", false, false}, {"[1 2]", false, false}, {"[", false, false},
		{"]", false, false}, {"[1}", false, false}, {`{"a":1,}`, false, false}, {`{"a"}`, false, false},
		{`{"a":}`, false, false}, {`{a:1}`, false, false}, {`{1:1}`, false, false}, {`{"a" 1}`, false, false},
		{`{"a":1 "b":2}`, false, false}, {`{"a":1]`, false, false}, {"{", false, false}, {"}", false, false},
		{`{"a":1}}`, false, false}, {`[]]`, false, false}, {`{}{}`, false, false}, {`[][]`, false, false},
		// refused by design: encoding/json may decode these keys differently from their bytes
		{`{"\u0061":1}`, false, true}, {`{"a\"b":1}`, false, true}, {`{"é":1}`, false, true},
		{"{\"\xff\":1}", false, true}, {`[{"x":{"\n":1}}]`, false, true}, {"{\"\n\":1}", false, false},
		// depth
		{nest(MaxDepth, "[", "", "]"), true, false}, {nest(MaxDepth+1, "[", "", "]"), false, true},
		{nest(MaxDepth, `{"a":`, "1", "}"), true, false}, {nest(MaxDepth+1, `{"a":`, "1", "}"), false, true},
		{nest(MaxDepth/2, `[{"a":`, "1", "}]"), true, false}, {nest(MaxDepth/2, `[{"a":`, "[]", "}]"), false, true},
		{nest(100000, "[", "", ""), false, false}, // deep and truncated: refused without deep recursion
	} {
		got := document([]byte(tc.in))
		if got != tc.want {
			t.Errorf("document(%.40q) = %v, want %v", tc.in, got, tc.want)
		}
		if std := json.Valid([]byte(tc.in)); std != (tc.want || tc.refuses) {
			t.Errorf("json.Valid(%.40q) = %v: the case's expectation is wrong", tc.in, std)
		}
	}
}

// TestValueBounds checks where Value says a value starts and ends. It stops at the first
// byte that cannot continue the value and leaves that byte to the caller, so "truex" or
// "0123" is a value followed by garbage, which the caller's next delimiter check refuses.
func TestValueBounds(t *testing.T) {
	for _, tc := range []struct {
		in         string
		start, end int
		ok         bool
	}{
		{"  123 ,", 2, 5, true}, {`"a\"b"x`, 0, 6, true}, {"truex", 0, 4, true}, {"nullnull", 0, 4, true},
		{"0123", 0, 1, true}, {"-0-", 0, 2, true}, {"1.5e3.2", 0, 5, true}, {`[1,[2]],3`, 0, 7, true},
		{`{"a":[1,{"b":"}"}]} x`, 0, 19, true}, {"\n\t[]", 2, 4, true},
	} {
		s := Scanner{B: []byte(tc.in)}
		start, ok := s.Value()
		if start != tc.start || s.I != tc.end || ok != tc.ok {
			t.Errorf("Value(%q) = %d..%d %v, want %d..%d %v", tc.in, start, s.I, ok, tc.start, tc.end, tc.ok)
		}
	}
}

func TestWSNextLiteralNull(t *testing.T) {
	s := Scanner{B: []byte(" \t\r\n x")}
	if s.WS(); s.I != 5 {
		t.Errorf("WS stopped at %d, want 5", s.I)
	}
	if s.WS(); s.I != 5 {
		t.Errorf("WS moved past a non-space to %d", s.I)
	}
	if !s.Next('x') || s.I != 6 || s.Next('x') || s.I != 6 {
		t.Errorf("Next: got I=%d", s.I)
	}
	s.WS() // at the end: no-op
	for _, tc := range []struct {
		in   string
		ok   bool
		next int
	}{{"null", true, 4}, {"  null,", true, 6}, {"nul", false, 0}, {"Null", false, 0}, {"", false, 0}, {" ", false, 1}} {
		s := Scanner{B: []byte(tc.in)}
		if ok := s.Null(); ok != tc.ok || s.I != tc.next {
			t.Errorf("Null(%q) = %v at %d, want %v at %d", tc.in, ok, s.I, tc.ok, tc.next)
		}
	}
	// Literal does not skip whitespace: callers reach it after WS or Null.
	for _, tc := range []struct {
		in, lit string
		ok      bool
	}{{"true", "true", true}, {"false]", "false", true}, {" true", "true", false}, {"tru", "true", false}, {"", "null", false}} {
		s := Scanner{B: []byte(tc.in)}
		if ok := s.Literal(tc.lit); ok != tc.ok || (ok && s.I != len(tc.lit)) || (!ok && s.I != 0) {
			t.Errorf("Literal(%q, %q) = %v at %d", tc.in, tc.lit, ok, s.I)
		}
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		in, key string
		ok      bool
	}{
		{`"a"`, "a", true}, {` "prompt_tokens":`, "prompt_tokens", true}, {`""`, "", true},
		{`"a b.c-d"`, "a b.c-d", true}, {`"\u0061"`, "", false}, {`"a\"b"`, "", false}, {`"é"`, "", false},
		{"\"a\tb\"", "", false}, {"\"\x7f\"", "\x7f", true}, {`"a`, "", false}, {`a"`, "", false}, {``, "", false},
	} {
		s := Scanner{B: []byte(tc.in)}
		key, ok := s.Key()
		if ok != tc.ok || string(key) != tc.key {
			t.Errorf("Key(%q) = %q %v, want %q %v", tc.in, key, ok, tc.key, tc.ok)
		}
	}
}

// TestStrEscape covers Str and Escape, which Key and Value rely on.
func TestStrEscape(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		next int // where a successful Str stops
	}{
		{`""`, true, 2}, {`"abc"def`, true, 5}, {`"\"" `, true, 4}, {`"\\"\"`, true, 4},
		{`"\u12aF\uFFFF"`, true, 14}, {`"\ud83d\ude00"`, true, 14}, {"\"\xc3\x28\"", true, 4},
		{`"\u12"`, false, 0}, {`"\u"`, false, 0}, {`"\a"`, false, 0}, {`"\0"`, false, 0},
		{"\"\x00\"", false, 0}, {"\"\x1f\"", false, 0}, {`"abc`, false, 0}, {`"`, false, 0},
		// Str needs its opening quote; without one it refuses rather than skipping a byte
		{``, false, 0}, {`abc"`, false, 0},
	} {
		s := Scanner{B: []byte(tc.in)}
		ok := s.Str()
		if ok != tc.ok || (ok && s.I != tc.next) || s.I > len(s.B) {
			t.Errorf("Str(%q) = %v at %d, want %v at %d", tc.in, ok, s.I, tc.ok, tc.next)
		}
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`"`, true}, {`\`, true}, {`/`, true}, {`b`, true}, {`f`, true}, {`n`, true}, {`r`, true}, {`t`, true},
		{`u0000`, true}, {`uABCD`, true}, {`u00`, false}, {`u00G0`, false}, {`U0000`, false}, {`x`, false}, {``, false},
	} {
		s := Scanner{B: []byte(tc.in)}
		if ok := s.Escape(); ok != tc.ok {
			t.Errorf("Escape(%q) = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

func TestNumberDigits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		next int
	}{
		{"0", true, 1}, {"-0", true, 2}, {"12", true, 2}, {"-12.50e+07,", true, 10}, {"1E5", true, 3},
		{"100000000000000000000000", true, 24}, {"0.0001", true, 6}, {"012", true, 1}, {"1.5.5", true, 3},
		{"-", false, 0}, {"-a", false, 0}, {"1.", false, 0}, {"1.x", false, 0}, {"1e", false, 0}, {"1e-", false, 0},
		{"", false, 0}, {"a", false, 0}, {".5", false, 0}, {"+1", false, 0},
	} {
		s := Scanner{B: []byte(tc.in)}
		ok := s.Number()
		if ok != tc.ok || (ok && s.I != tc.next) || s.I > len(s.B) {
			t.Errorf("Number(%q) = %v at %d, want %v at %d", tc.in, ok, s.I, tc.ok, tc.next)
		}
	}
	s := Scanner{B: []byte("0123x")}
	if !s.Digits() || s.I != 4 || s.Digits() || s.I != 4 {
		t.Errorf("Digits: got I=%d", s.I)
	}
}

// TestObjectArray checks the callbacks: one per key or element, in order, positioned before
// the value; and that a callback's false stops the walk.
func TestObjectArray(t *testing.T) {
	s := Scanner{B: []byte(` { "a" : 1 , "b":[2, 3] ,"c" :{"d":null}} `)}
	var got []string
	ok := s.Object(func(key []byte) bool {
		start, ok := s.Value()
		got = append(got, string(key)+"="+string(s.B[start:s.I]))
		return ok
	})
	if want := `a=1 b=[2, 3] c={"d":null}`; !ok || strings.Join(got, " ") != want || s.Depth != 0 {
		t.Errorf("Object: %v %q depth %d, want %q", ok, got, s.Depth, want)
	}
	s = Scanner{B: []byte(`[ 1 ,"x", [ ] ]`)}
	got = got[:0]
	ok = s.Array(func() bool {
		start, ok := s.Value()
		got = append(got, string(s.B[start:s.I]))
		return ok
	})
	if want := `1 "x" [ ]`; !ok || strings.Join(got, " ") != want || s.I != len(s.B) || s.Depth != 0 {
		t.Errorf("Array: %v %q at %d, want %q", ok, got, s.I, want)
	}
	s = Scanner{B: []byte(`[1,2]`)}
	if s.Array(func() bool { return false }) {
		t.Error("Array ignored its callback's false")
	}
	s = Scanner{B: []byte(`{"a":1}`)}
	if s.Object(func([]byte) bool { return false }) {
		t.Error("Object ignored its callback's false")
	}
	s = Scanner{B: []byte(`[]`)}
	if s.Object(func([]byte) bool { return true }) {
		t.Error("Object accepted an array")
	}
	s = Scanner{B: []byte(`{}`)}
	if s.Array(func() bool { return true }) {
		t.Error("Array accepted an object")
	}
}

// TestKnownFolds checks the refusals that keep callers off the keys encoding/json merges.
func TestKnownFolds(t *testing.T) {
	known := func(key []byte) (uint, bool) {
		switch string(key) {
		case "id":
			return 0, true
		case "phase":
			return 63, true // the last usable bit
		}
		return 0, false
	}
	folds := func(key []byte) bool {
		return !bytes.Equal(key, []byte("id")) && bytes.EqualFold(key, []byte("id")) ||
			!bytes.Equal(key, []byte("phase")) && bytes.EqualFold(key, []byte("phase"))
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"id":1,"phase":"m"}`, true}, {`{"id":1,"x":2,"x":3}`, true}, // unknown keys may repeat
		{`{"id":1,"id":1}`, false}, {`{"phase":1,"id":2,"phase":3}`, false}, {`{"Id":1}`, false},
		{`{"PHASE":1}`, false}, {`{"ids":1}`, true},
		{`{"id":{"id":1}}`, true}, {`[{"id":1},{"id":2}]`, true}, // one set of keys per object
		{`{"a":{"id":1,"id":2}}`, false}, // nested objects skipped by Value are checked too
	} {
		s := Scanner{B: []byte(tc.in), Known: known, Folds: folds}
		if _, ok := s.Value(); ok != tc.ok {
			t.Errorf("Value(%s) with Known = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

// TestInt64 pins the integer fast path: plain integers of up to 18 digits, which cannot
// overflow int64, are decoded; everything else is false, and the caller's encoding/json
// fallback decides (it rejects 10^23 and other overflows for an int64 field, and accepts
// 1e2 or 1.0 nowhere an integer goes).
func TestInt64(t *testing.T) {
	const keep = int64(-7) // what null and failures must leave
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
		next int
	}{
		{"0", 0, true, 1}, {"-0", 0, true, 2}, {"42", 42, true, 2}, {" \n-42,", -42, true, 5},
		{"999999999999999999", 999999999999999999, true, 18}, {"-999999999999999999", -999999999999999999, true, 19},
		{"null", keep, true, 4}, {" null]", keep, true, 5}, {"7x", 7, true, 1}, // the caller checks what follows
		// beyond 18 digits: refused even where int64 could hold the value
		{"1000000000000000000", keep, false, 0}, {"9223372036854775807", keep, false, 0},
		{"9223372036854775808", keep, false, 0}, {"100000000000000000000000", keep, false, 0},
		{"-99999999999999999999999999999999999999", keep, false, 0},
		{"1e23", keep, false, 0}, {"1E2", keep, false, 0}, {"1.0", keep, false, 0}, {"-0.0", keep, false, 0},
		{"01", keep, false, 0}, {"-01", keep, false, 0}, {"00", keep, false, 0},
		{"-", keep, false, 0}, {"+1", keep, false, 0}, {"", keep, false, 0}, {"\"1\"", keep, false, 0},
		{"true", keep, false, 0}, {"nul", keep, false, 0},
	} {
		s, v := Scanner{B: []byte(tc.in)}, keep
		ok := s.Int64(&v)
		if ok != tc.ok || v != tc.want || (ok && s.I != tc.next) {
			t.Errorf("Int64(%q) = %d %v at %d, want %d %v at %d", tc.in, v, ok, s.I, tc.want, tc.ok, tc.next)
		}
		// wherever the fast path decodes, encoding/json must agree
		if w := keep; ok && (json.Unmarshal(s.B[:s.I], &w) != nil || w != v) {
			t.Errorf("Int64(%q) = %d, encoding/json says %d", tc.in, v, w)
		}
	}
}

// TestInt checks Int against the platform's int: on a 32-bit platform an 18-digit integer
// does not fit, and Int must refuse it (encoding/json reports an overflow) rather than
// truncate it.
func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		fits bool // in a 32-bit int
	}{
		{"0", 0, true}, {"-2147483648", -2147483648, true}, {"2147483647", 2147483647, true},
		{"2147483648", 2147483648, false}, {"-2147483649", -2147483649, false},
		{"4294967296", 4294967296, false}, {"999999999999999999", 999999999999999999, false},
	} {
		s, v := Scanner{B: []byte(tc.in)}, 5
		ok := s.Int(&v)
		wantOK := tc.fits || strconv.IntSize == 64
		if ok != wantOK || (ok && int64(v) != tc.want) || (!ok && v != 5) {
			t.Errorf("Int(%q) = %d %v, want %d %v", tc.in, v, ok, tc.want, wantOK)
		}
		var w int
		if err := json.Unmarshal([]byte(tc.in), &w); (err == nil) != wantOK {
			t.Errorf("encoding/json into int(%q): %v; the case's expectation is wrong", tc.in, err)
		}
	}
	s, v := Scanner{B: []byte("null")}, 5
	if !s.Int(&v) || v != 5 {
		t.Errorf("Int(null) = %d, want 5 unchanged", v)
	}
}

// TestTruncated cuts every seed at every byte: a prefix is never a valid document unless
// json.Valid says it is one (a number's own prefix, say), and nothing panics.
func TestTruncated(t *testing.T) {
	for _, seed := range seeds(t) {
		for i := range len(seed) {
			prefix := seed[:i]
			if got, want := document(prefix), json.Valid(prefix); got != want {
				t.Fatalf("document(%q) = %v, json.Valid = %v", prefix, got, want)
			}
		}
	}
}

// TestEveryOffset calls every exported function at every offset of every seed and of its
// truncations: whatever the position, they return rather than panic, and leave the position
// within the text.
func TestEveryOffset(t *testing.T) {
	in := append(seeds(t), []byte(`-`), []byte(`"`), []byte(`"\`), []byte(`"\u12`), []byte(`{"a`), []byte(`[1,`))
	for _, seed := range in {
		for i := range len(seed) + 1 {
			exercise(t, seed, i) // every offset of the whole text
		}
		for end := range len(seed) {
			for _, i := range []int{0, end - 2, end - 1, end} { // every cut, near its end
				if i >= 0 {
					exercise(t, seed[:end], i)
				}
			}
		}
	}
}

func exercise(t *testing.T, b []byte, i int) {
	t.Helper()
	skip := func(s *Scanner) func([]byte) bool {
		return func([]byte) bool { _, ok := s.Value(); return ok }
	}
	var v64 int64
	var v int
	for name, f := range map[string]func(s *Scanner){
		"WS":      func(s *Scanner) { s.WS() },
		"Next":    func(s *Scanner) { s.Next(',') },
		"Null":    func(s *Scanner) { s.Null() },
		"Literal": func(s *Scanner) { s.Literal("true") },
		"Key":     func(s *Scanner) { s.Key() },
		"Str":     func(s *Scanner) { s.Str() },
		"Escape":  func(s *Scanner) { s.Escape() },
		"Number":  func(s *Scanner) { s.Number() },
		"Digits":  func(s *Scanner) { s.Digits() },
		"Value":   func(s *Scanner) { s.Value() },
		"Object":  func(s *Scanner) { s.Object(skip(s)) },
		"Array":   func(s *Scanner) { s.Array(func() bool { _, ok := s.Value(); return ok }) },
		"Int64":   func(s *Scanner) { s.Int64(&v64) },
		"Int":     func(s *Scanner) { s.Int(&v) },
	} {
		s := Scanner{B: b, I: i}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s on %q at %d panicked: %v", name, b, i, r)
				}
			}()
			f(&s)
		}()
		if s.I < i || s.I > len(b) {
			t.Fatalf("%s on %q at %d left I = %d", name, b, i, s.I)
		}
	}
}
