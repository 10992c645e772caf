package workload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// fileLine is one line of a prompts file. A saved workload (Save) has the same shape, so a
// saved workload can be read back with ReadFile and replayed exactly.
type fileLine struct {
	Prompt       *string   `json:"prompt,omitempty"`
	Messages     []Message `json:"messages,omitempty"`
	OutputTokens int       `json:"output_tokens,omitempty"`
	InputTokens  int       `json:"input_tokens,omitempty"`
	Session      int       `json:"session,omitempty"`
	Turn         int       `json:"turn,omitempty"`
	SessionKey   string    `json:"session_key,omitempty"` // a replayed trace row's session (Request.SessionKey)
	Adapter      string    `json:"adapter,omitempty"`     // LoRA adapter (lora.go)
	Media        []Media   `json:"media,omitempty"`
	// the answer key of an answers dataset (answers.go): "answer", "match", "tolerance"
	answerFields
}

// ReadFile reads a JSONL prompts file: each line {"prompt": "..."} or {"messages": [...]},
// with an optional "output_tokens" (defaultOut when absent) and "input_tokens". Blank lines are
// skipped. A malformed line is an error naming its line number.
func ReadFile(path string, defaultOut int) ([]Request, error) {
	in, err := OpenInput(context.Background(), path, 0)
	if err != nil {
		return nil, fmt.Errorf("open prompts: %w", err)
	}
	defer in.Close()
	return Read(in, path, defaultOut)
}

// Read is ReadFile on an open reader; name is used in error messages.
func Read(r io.Reader, name string, defaultOut int) ([]Request, error) {
	lr := newLineReader(r, DefaultMaxRecordBytes)
	var reqs []Request
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &InputError{File: name, Line: lr.line, Offset: -1, Err: err}
		}
		b := bytes.TrimSpace(line)
		if len(b) == 0 {
			continue
		}
		req, err := parseLine(b, defaultOut)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lr.line, err)
		}
		req.ID = len(reqs)
		reqs = append(reqs, req)
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: %w: no prompts", name, ErrNoRequests)
	}
	return reqs, nil
}

func parseLine(b []byte, defaultOut int) (Request, error) {
	var l fileLine
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&l); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return Request{}, fmt.Errorf("%q: %w", typ.Field, typeError(typ))
		}
		return Request{}, fmt.Errorf("invalid JSON: %v", err)
	}
	switch {
	case l.Prompt == nil && len(l.Messages) == 0:
		return Request{}, errors.New(`need "prompt" or "messages"`)
	case l.Prompt != nil && len(l.Messages) > 0:
		return Request{}, errors.New(`give "prompt" or "messages", not both`)
	case l.OutputTokens < 0:
		return Request{}, errors.New(`"output_tokens" must be positive`)
	case l.OutputTokens > maxTraceTokens || l.InputTokens > maxTraceTokens || l.InputTokens < 0:
		return Request{}, fmt.Errorf(`"input_tokens" and "output_tokens" must be 0 to %d`, maxTraceTokens)
	}
	if err := CheckMedia(l.Media); err != nil {
		return Request{}, err
	}
	ans, err := l.answerFields.key()
	if err != nil {
		return Request{}, err
	}
	req := Request{Messages: l.Messages, OutputTokens: l.OutputTokens, InputTokens: l.InputTokens, Session: l.Session, Turn: l.Turn, Media: l.Media, Adapter: l.Adapter, Answer: ans,
		SessionKey: l.SessionKey}
	if l.Prompt != nil {
		req.Prompt = *l.Prompt
	}
	if req.OutputTokens == 0 {
		req.OutputTokens = defaultOut
	}
	return req, nil
}

// Save writes the materialised workload as JSONL, one request per line, in the prompts-file
// format, so that `--prompts FILE` replays it exactly.
func Save(path string, reqs []Request) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save workload: %w", err)
	}
	w := bufio.NewWriter(f)
	if err := encodeAll(w, reqs); err != nil {
		f.Close()
		return fmt.Errorf("save workload: %w", err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("save workload: %w", err)
	}
	return f.Close()
}

func encodeAll(w io.Writer, reqs []Request) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range reqs {
		r := reqs[i].Materialize() // a lazy request's text, rebuilt for this line only
		l := fileLine{Messages: r.Messages, OutputTokens: r.OutputTokens, InputTokens: r.InputTokens, Session: r.Session, Turn: r.Turn, Media: r.Media, Adapter: r.Adapter,
			SessionKey: r.SessionKey, answerFields: fieldsOf(r.Answer)}
		if r.Messages == nil {
			l.Prompt = &r.Prompt
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// Hash is the workload's identity: sha256 over the materialised requests (prompts and
// lengths, in the saved-file encoding) followed by the JSON of settings (sampling, fixed
// output, seed — whatever else defines what is sent). Two runs with the same hash sent the
// same requests.
func Hash(reqs []Request, settings any) (string, error) {
	h := sha256.New()
	if err := encodeAll(h, reqs); err != nil {
		return "", err
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", err
	}
	h.Write(b)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
