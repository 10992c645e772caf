package sim

import (
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
)

// responseFormat is a request's response_format: the schema its answer must meet ({"type":
// "object"} for json_object).
type responseFormat struct {
	schema map[string]any
}

// parseResponseFormat reads response_format: absent or {"type":"text"} is none; json_object
// asks for any JSON object; json_schema for a document meeting json_schema.schema.
func parseResponseFormat(raw json.RawMessage) (*responseFormat, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, errors.New("response_format: " + err.Error())
	}
	switch f.Type {
	case "text":
		return nil, nil
	case "json_object":
		return &responseFormat{schema: map[string]any{"type": "object"}}, nil
	case "json_schema":
		if f.JSONSchema == nil || f.JSONSchema.Schema == nil {
			return nil, errors.New("response_format: json_schema.schema is required")
		}
		return &responseFormat{schema: f.JSONSchema.Schema}, nil
	}
	return nil, errors.New(`response_format.type: want "text", "json_object" or "json_schema"`)
}

// structuredAnswer is a JSON document meeting f's schema; broken, it does not: cut short (not
// JSON) when cut or when the schema has no typed property to give the wrong type, else with
// its first property (in key order) of the wrong type.
func structuredAnswer(f *responseFormat, broken, cut bool) string {
	g := &jsonGen{root: f.schema}
	v := g.value(f.schema, 0)
	if broken && !cut {
		if obj, ok := v.(map[string]any); ok {
			if k, wrong, ok := g.wrongProperty(f.schema); ok {
				obj[k] = wrong
				b, _ := json.Marshal(obj)
				return string(b)
			}
		}
		cut = true
	}
	b, _ := json.Marshal(v)
	if broken && cut {
		return string(b[:len(b)/2])
	}
	return string(b)
}

// jsonGen builds an instance of a JSON Schema: the subset structured-output engines take
// (OpenAI's strict mode: objects, arrays, strings, numbers, integers, booleans, null, enum,
// const, anyOf, $ref to $defs), and simple bounds (minimum, maximum, minLength, maxLength,
// minItems, maxItems, pattern, a few formats).
type jsonGen struct {
	root map[string]any
}

const maxGenDepth = 16

func (g *jsonGen) value(node any, depth int) any {
	s, _ := node.(map[string]any)
	if s == nil || depth > maxGenDepth {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		return g.value(g.resolve(ref), depth+1)
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return g.value(alts[0], depth+1)
		}
	}
	switch typeOf(s) {
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			obj[k] = g.value(p, depth+1)
		}
		return obj
	case "array":
		n := max(1, intOf(s["minItems"], 1))
		if mx, ok := s["maxItems"]; ok {
			n = min(n, intOf(mx, n))
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(s["items"], depth+1)
		}
		return out
	case "string":
		return genString(s)
	case "integer":
		return math.Round(genNumber(s, true))
	case "number":
		return genNumber(s, false)
	case "boolean":
		return true
	}
	return nil
}

// typeOf is a schema's type: its "type" (the first that is not "null" of a list), else
// object when it has properties, else "".
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if n, ok := x.(string); ok && n != "null" {
				return n
			}
		}
		return "null"
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

// resolve follows a local reference, "#/$defs/Name" or "#/definitions/Name".
func (g *jsonGen) resolve(ref string) any {
	var node any = g.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := node.(map[string]any)
		if m == nil || part == "" || part == "#" {
			break
		}
		node = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	return node
}

// wrongProperty is the first property (in key order) of an object schema with a type, and a
// value of another type.
func (g *jsonGen) wrongProperty(s map[string]any) (string, any, bool) {
	if ref, ok := s["$ref"].(string); ok {
		s, _ = g.resolve(ref).(map[string]any)
	}
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, _ := props[k].(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			p, _ = g.resolve(ref).(map[string]any)
		}
		switch typeOf(p) {
		case "string":
			return k, 12345, true
		case "integer", "number", "boolean", "object", "array":
			return k, "not the right type", true
		}
	}
	return "", nil, false
}

func intOf(v any, def int) int {
	if f, ok := v.(float64); ok && f >= 0 && f < 1e6 {
		return int(f)
	}
	return def
}

func numOf(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

// genNumber is a number inside the schema's bounds: 0 moved into [minimum, maximum] (an
// exclusive bound moved past by one, or by half the range when that is less).
func genNumber(s map[string]any, integer bool) float64 {
	lo, hasLo := numOf(s["minimum"])
	hi, hasHi := numOf(s["maximum"])
	if x, ok := numOf(s["exclusiveMinimum"]); ok {
		lo, hasLo = x+1, true
		if integer {
			lo = math.Floor(x) + 1
		}
	}
	if x, ok := numOf(s["exclusiveMaximum"]); ok {
		hi, hasHi = x-1, true
		if integer {
			hi = math.Ceil(x) - 1
		}
	}
	v := 0.0
	if hasLo && v < lo {
		v = lo
	}
	if hasHi && v > hi {
		v = hi
	}
	if integer {
		v = math.Ceil(v)
		if hasHi && v > hi {
			v = math.Floor(hi)
		}
	}
	if m, ok := numOf(s["multipleOf"]); ok && m > 0 {
		v = math.Ceil(v/m) * m
	}
	return v
}

// genString is a string meeting the schema's format, pattern and length bounds.
func genString(s map[string]any) string {
	switch s["format"] {
	case "date-time":
		return "2025-01-01T00:00:00Z"
	case "date":
		return "2025-01-01"
	case "time":
		return "00:00:00Z"
	case "email":
		return "sim@example.com"
	case "uri", "url":
		return "https://example.com/"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	}
	v := "simulated"
	if p, ok := s["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil {
			v = sampleMatch(re)
		}
	}
	if n := intOf(s["minLength"], 0); len([]rune(v)) < n {
		v += strings.Repeat("x", n-len([]rune(v)))
	}
	if n, ok := s["maxLength"]; ok {
		if r := []rune(v); len(r) > intOf(n, len(r)) {
			v = string(r[:intOf(n, len(r))])
		}
	}
	return v
}

// sampleMatch is a short string that re matches: built from its syntax tree (the first
// alternative, the fewest repeats, the first character of a class), else "".
func sampleMatch(re *regexp.Regexp) string {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return ""
	}
	var b strings.Builder
	sample(t.Simplify(), &b, 0)
	if re.MatchString(b.String()) {
		return b.String()
	}
	return ""
}

func sample(t *syntax.Regexp, b *strings.Builder, depth int) {
	if depth > 64 {
		return
	}
	switch t.Op {
	case syntax.OpLiteral:
		b.WriteString(string(t.Rune))
	case syntax.OpCharClass:
		if len(t.Rune) > 0 {
			r := t.Rune[0]
			if r < ' ' && len(t.Rune) > 1 && t.Rune[1] >= 'a' { // prefer a printable character
				r = max(t.Rune[0], 'a')
			}
			b.WriteRune(r)
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture, syntax.OpPlus:
		sample(t.Sub[0], b, depth+1)
	case syntax.OpRepeat:
		for range t.Min {
			sample(t.Sub[0], b, depth+1)
		}
	case syntax.OpConcat:
		for _, s := range t.Sub {
			sample(s, b, depth+1)
		}
	case syntax.OpAlternate:
		sample(t.Sub[0], b, depth+1)
	}
}
