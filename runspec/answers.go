package runspec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"servebench/client"
	"servebench/client/apis"
	"servebench/metrics"
	"servebench/schema"
)

// Answers: --response-format asks for structured output and checks every answer against the
// schema; --dataset answers:FILE scores every answer against the file's answer key; --slo
// correct counts in goodput only the requests whose answer was right (docs/accuracy.md).

// AnswersDataset reports whether --dataset is an answers file.
func (s *Spec) AnswersDataset() bool {
	f, _ := s.DatasetOf()
	return f == "answers"
}

// JudgesAnswers reports whether the run reads every answer's text: to score it, or to check
// it against the response format.
func (s *Spec) JudgesAnswers() bool { return s.AnswersDataset() || s.ResponseFormat != "" }

// TextAPIs are the APIs whose answer text servebench reads (client.TextObserver).
var TextAPIs = []string{"openai-chat", "openai-completions"}

// CheckTextAPI refuses an API whose answer text servebench cannot read, for a run that
// judges answers; api is the resolved name (after auto detection).
func (s *Spec) CheckTextAPI(api string) error {
	if !s.JudgesAnswers() {
		return nil
	}
	name, err := apis.Canonical(api)
	if err == nil && (name == "openai-chat" || name == "openai-completions") {
		return nil
	}
	return Usagef("--response-format and --dataset answers read the answer text, which servebench reads from --api %s only, not %s", strings.Join(TextAPIs, " or "), api)
}

// maxSchemaBytes bounds a --response-format schema file: a schema is a few kilobytes.
const maxSchemaBytes = 1 << 20

// responseFormat is --response-format parsed: the OpenAI response_format object sent and the
// schema every answer is checked against.
type responseFormat struct {
	body   map[string]any
	schema *schema.Schema
}

// parseResponseFormat reads --response-format: json (a JSON object, OpenAI's json_object)
// or json-schema:FILE (OpenAI's json_schema, strict). FILE holds a JSON Schema, or an
// OpenAI json_schema object ({"name": …, "schema": {…}}) whose schema is used.
func (s *Spec) parseResponseFormat() (*responseFormat, error) {
	v := s.ResponseFormat
	if v == "" {
		return nil, nil
	}
	if v == "json" {
		sch, err := schema.Compile("json", []byte(`{"type":"object"}`))
		if err != nil {
			return nil, err
		}
		return &responseFormat{body: map[string]any{"type": "json_object"}, schema: sch}, nil
	}
	path, ok := strings.CutPrefix(v, "json-schema:")
	if !ok || path == "" {
		return nil, Usagef("--response-format %q: want json or json-schema:FILE", v)
	}
	raw, err := readSmall(path)
	if err != nil {
		return nil, Usagef("--response-format: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil || doc == nil {
		return nil, Usagef("--response-format %s: want a JSON Schema object", path)
	}
	name := schemaName(path)
	if inner, ok := doc["schema"].(map[string]any); ok && doc["type"] == nil {
		if n, ok := doc["name"].(string); ok && n != "" {
			name = n
		}
		doc = inner
		raw, _ = json.Marshal(inner) // decoded from JSON: encodes again
	}
	sch, err := schema.Compile(path, raw)
	if err != nil {
		return nil, Usagef("--response-format: %v", err)
	}
	body := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": name, "schema": doc, "strict": true}}
	return &responseFormat{body: body, schema: sch}, nil
}

// ResponseSchema is the schema every answer is checked against (nil without
// --response-format). Call it after Validate.
func (s *Spec) ResponseSchema() *schema.Schema {
	rf, err := s.parseResponseFormat()
	if err != nil || rf == nil {
		return nil
	}
	return rf.schema
}

// putResponseFormat adds response_format to the request body's extra keys.
func (s *Spec) putResponseFormat(out *client.Sampling) error {
	rf, err := s.parseResponseFormat()
	if err != nil || rf == nil {
		return err
	}
	if _, ok := out.ExtraBody["response_format"]; ok {
		return Usagef("--response-format and a response_format in --extra-body: choose one")
	}
	if out.ExtraBody == nil {
		out.ExtraBody = map[string]any{}
	}
	out.ExtraBody["response_format"] = rf.body
	return nil
}

// validateAnswers checks --response-format, the API of a run that judges answers, and --slo
// correct (which needs answers to judge).
func (s *Spec) validateAnswers() error {
	if _, err := s.parseResponseFormat(); err != nil {
		return err
	}
	if s.IsSet("api") && s.API != "auto" {
		if err := s.CheckTextAPI(s.API); err != nil {
			return err
		}
	}
	slo, _ := metrics.ParseSLOs(s.SLO) // validated by validateLoad
	if slo.Correct && !s.JudgesAnswers() {
		return Usagef("--slo correct needs answers to judge: --dataset answers:FILE or --response-format")
	}
	return nil
}

// readSmall reads a file of at most maxSchemaBytes.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSchemaBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxSchemaBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes: not a schema", path, maxSchemaBytes)
	}
	return b, nil
}

var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// schemaName is the json_schema name OpenAI requires (letters, digits, _ and -, at most
// 64), from the schema file's base name.
func schemaName(path string) string {
	n := nameUnsafe.ReplaceAllString(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), "_")
	if n == "" {
		n = "answer"
	}
	return n[:min(len(n), 64)]
}

// resolveAnswers fills what a run that judges answers needs when not given: the chat API for
// an answers dataset (its items are questions to an instruction model, some written as
// messages), and free output lengths (--fixed-output=false), since a model told to ignore its
// end-of-sequence token would write on past its answer and spoil an exact match.
func (s *Spec) resolveAnswers() {
	if s.AnswersDataset() && !s.IsSet("api") {
		s.API = "openai-chat"
	}
	if s.JudgesAnswers() && !s.IsSet("fixed-output") {
		s.FixedOutput = false
	}
}
