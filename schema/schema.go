// Package schema checks JSON documents against a JSON Schema: the tools' argument schemas of a
// tool-calling run and the response format of a structured-output run. It wraps
// github.com/santhosh-tekuri/jsonschema (drafts 4 to 2020-12) so that callers hold a compiled
// schema and get back the first violation as one line.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema, safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
}

// Compile compiles the JSON Schema document raw; name labels it in errors (a file path or a
// tool's name).
func Compile(name string, raw []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: not JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	loc := "mem://schema/" + strings.ReplaceAll(name, " ", "_")
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %v", name, err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %s", name, oneLine(err))
	}
	return &Schema{s: s}, nil
}

// Validate checks the JSON text doc. It returns nil when doc parses as JSON and meets the schema;
// otherwise an error of one line: "not JSON: …" or the first violation with its place in doc.
func (s *Schema) Validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := s.s.Validate(v); err != nil {
		return errors.New(oneLine(err))
	}
	return nil
}

// oneLine keeps the most specific cause of a validation error and joins what is left on one line.
func oneLine(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		loc := "/" + strings.Join(ve.InstanceLocation, "/")
		return fmt.Sprintf("at %s: %s", loc, strings.Join(strings.Fields(ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))), " "))
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
