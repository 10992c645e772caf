package schema

import (
	"strings"
	"testing"
)

const weather = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},
"required":["city"],"additionalProperties":false}`

func TestValidate(t *testing.T) {
	s, err := Compile("get_weather", []byte(weather))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		doc  string
		want string // "" for valid, else a part of the error
	}{
		{`{"city":"Oslo"}`, ""},
		{`{"city":"Oslo","days":3}`, ""},
		{`{"days":3}`, "missing"},
		{`{"city":"Oslo","days":0}`, "/days"},
		{`{"city":"Oslo","extra":1}`, "extra"},
		{`{"city":`, "not JSON"},
		{`[1,2]`, "object"},
	}
	for _, c := range cases {
		err := s.Validate([]byte(c.doc))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", c.doc, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error naming %q", c.doc, err, c.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error of more than one line: %q", c.doc, err)
		}
	}
}

func TestCompileRefusesABadSchema(t *testing.T) {
	for _, raw := range []string{`{"type":`, `{"type":"nonsense"}`, `{"minimum":"a"}`} {
		if _, err := Compile("bad", []byte(raw)); err == nil {
			t.Errorf("%s compiled", raw)
		}
	}
}
