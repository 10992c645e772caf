package report

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"servebench/metrics"
	"slices"
	"strconv"
	"strings"
)

// No output of servebench shows NaN or Inf: an undefined figure is null in JSON and "—" for a
// person. The metrics avoid computing one, but a figure the report does not know of (a new
// field of a summary's nested struct, a statistic that divides by a zero median) must not make
// `report --format json` fail on a records file for good, as encoding/json refuses NaN and
// ±Inf. So every JSON value the report writes goes through marshalFinite.

// marshalFinite is json.Marshal(v), except that a NaN or ±Inf float anywhere in v is written
// as null instead of failing. A value without one is encoded by json.Marshal itself, byte for
// byte; only a value json.Marshal refuses is rebuilt, as finiteValue says.
func marshalFinite(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	var uv *json.UnsupportedValueError
	if err == nil || !errors.As(err, &uv) {
		return b, err
	}
	return json.Marshal(finiteValue(reflect.ValueOf(v)))
}

// finiteValue returns v as a value json.Marshal encodes as it encodes v, except that non-finite
// floats are nil. Each part json.Marshal accepts is kept as its encoding; a part it refuses is
// taken apart: structs by encoding/json's field rules (the json tag's name, "-", omitempty,
// omitzero and embedded structs), maps, slices, arrays, pointers and interfaces element by
// element. A part that still fails (a MarshalJSON method that refuses a value) becomes null.
func finiteValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.CanInterface() {
		if b, err := json.Marshal(v.Interface()); err == nil {
			return json.RawMessage(b)
		}
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return v.Float()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return finiteValue(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = finiteValue(v.Index(i))
		}
		return out
	case reflect.Map:
		return finiteMap(v)
	case reflect.Struct:
		o := &object{}
		finiteFields(o, v)
		return o
	}
	return nil // a kind json.Marshal refuses for itself (a func, a channel)
}

// finiteMap is a map with string keys, as encoding/json names them; nil for a nil map.
func finiteMap(v reflect.Value) any {
	if v.IsNil() {
		return nil
	}
	out := make(map[string]any, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := it.Key()
		var name string
		switch {
		case k.Kind() == reflect.String:
			name = k.String()
		case k.Type().Implements(reflect.TypeFor[encoding.TextMarshaler]()):
			b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				continue
			}
			name = string(b)
		case k.CanInt():
			name = strconv.FormatInt(k.Int(), 10)
		case k.CanUint():
			name = strconv.FormatUint(k.Uint(), 10)
		default:
			continue
		}
		out[name] = finiteValue(it.Value())
	}
	return out
}

// finiteFields sets the fields of struct v on o, in order, by encoding/json's rules.
func finiteFields(o *object, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if sf.Anonymous && name == "" {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				finiteFields(o, fv) // an embedded struct's fields are the outer one's
				continue
			}
			if !sf.IsExported() {
				continue
			}
		}
		if name == "" {
			name = sf.Name
		}
		if hasOpt(opts, "omitempty") && emptyValue(fv) || hasOpt(opts, "omitzero") && fv.IsZero() {
			continue
		}
		o.set(name, finiteValue(fv))
	}
}

func hasOpt(opts, name string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// emptyValue is encoding/json's "empty" of omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// fin is a float64 that prints as dash ("—") when it is NaN or ±Inf, keeping the verb's
// width, and otherwise as the float64 prints: fmt.Sprintf("%.2f", fin(v)). A negative value
// that rounds to zero at the verb's precision prints as zero ("0.00", not "-0.00"): a sign
// the digits cannot back up reads as a negative figure (a TTFT part of −0.004 ms).
type fin float64

// Format implements fmt.Formatter.
func (f fin) Format(s fmt.State, verb rune) {
	x := float64(f)
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		format := fmt.FormatString(s, verb)
		out := fmt.Sprintf(format, x)
		if x < 0 && roundsToZero(out) {
			out = fmt.Sprintf(format, 0.0)
		}
		fmt.Fprint(s, out)
		return
	}
	pad := ""
	if w, ok := s.Width(); ok && w > 1 {
		pad = strings.Repeat(" ", w-1) // dash is one character wide
	}
	if s.Flag('-') {
		fmt.Fprint(s, dash+pad)
		return
	}
	fmt.Fprint(s, pad+dash)
}

// roundsToZero reports whether a formatted number shows no non-zero digit ("-0.00", "-0.0%").
func roundsToZero(out string) bool {
	digits := strings.TrimLeft(strings.TrimSpace(out), "+-")
	if digits == "" || strings.ContainsAny(digits, "eE") {
		return false
	}
	return strings.Trim(digits, "0.%") == ""
}

// nonFiniteWord is how fmt prints a non-finite float inside a sentence.
var nonFiniteWord = regexp.MustCompile(`[+-]?\bInf\b|\bNaN\b`)

// finiteNotes are notes with every non-finite figure a sentence was built with (fmt's "+Inf",
// "NaN") written as dash: the notes come from the metrics and compare packages, whose figures
// the report does not control, and no output shows NaN or Inf.
func finiteNotes(notes []string) []string {
	var out []string
	for i, n := range notes {
		if nonFiniteWord.MatchString(n) {
			if out == nil {
				out = slices.Clone(notes[:i])
			}
			n = nonFiniteWord.ReplaceAllString(n, dash)
		}
		if out != nil {
			out = append(out, n)
		}
	}
	if out == nil {
		return notes
	}
	return out
}

// finiteWarnings are a summary's warnings with their text and action made finite as
// finiteNotes makes notes.
func finiteWarnings(ws []metrics.Warning) []metrics.Warning {
	out := make([]metrics.Warning, len(ws))
	for i, w := range ws {
		w.Text = nonFiniteWord.ReplaceAllString(w.Text, dash)
		w.Action = nonFiniteWord.ReplaceAllString(w.Action, dash)
		out[i] = w
	}
	return out
}
