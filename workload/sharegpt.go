package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ShareGPT samples requests from a ShareGPT file (ShareGPT_V3_unfiltered_cleaned_split.json's
// shape: a top-level JSON array of {"id": …, "conversations": [{"from": "human"|"gpt",
// "value": "…"}, …]}) the way vLLM's benchmark does:
//
//   - a conversation with fewer than 2 turns is dropped;
//   - the prompt is the first human turn, and the output length is the following gpt turn's
//     length in the server's tokens (a conversation whose first human turn is not followed by
//     a gpt turn is dropped);
//   - a pair is dropped when prompt < MinPromptTokens (4), output < MinOutputTokens (4),
//     prompt > MaxPromptTokens (1024) or prompt+output > MaxTotalTokens (2048);
//   - the conversations are shuffled with Seed and the first Count valid ones are taken.
//
// A zero bound means vLLM's default, given in parentheses. The shuffle is not Python's, so
// the sample is not the one vLLM draws with the same seed; it has the same distribution.
//
// The file is read as a stream: memory is bounded by Count, not by the file's size.
type ShareGPT struct {
	Count           int   `json:"count"`
	Seed            int64 `json:"seed"`
	MinPromptTokens int   `json:"min_prompt_tokens"`
	MinOutputTokens int   `json:"min_output_tokens"`
	MaxPromptTokens int   `json:"max_prompt_tokens"`
	MaxTotalTokens  int   `json:"max_total_tokens"`
	Chat            bool  `json:"chat,omitempty"` // build chat messages instead of a completions prompt
	// MaxTurns bounds the turns of a session (ReadSessions only); 0 keeps them all.
	MaxTurns int `json:"max_turns,omitempty"`
	// MaxRecordBytes bounds one item of the array (0 means DefaultMaxRecordBytes). It changes
	// what is an error, never what is sent, so it is not part of the workload's identity.
	MaxRecordBytes int `json:"-"`
}

// WithDefaults returns the settings with every zero bound replaced by vLLM's default, the
// form to give Hash (so that a bound left at zero and the same bound set explicitly hash alike).
func (s ShareGPT) WithDefaults() ShareGPT {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&s.MinPromptTokens, 4)
	def(&s.MinOutputTokens, 4)
	def(&s.MaxPromptTokens, 1024)
	def(&s.MaxTotalTokens, 2048)
	return s
}

// Validate checks the settings.
func (s *ShareGPT) Validate() error {
	d := s.WithDefaults()
	switch {
	case s.Count < 1:
		return errors.New("number of prompts must be at least 1")
	case d.MinPromptTokens < 1 || d.MinOutputTokens < 1:
		return errors.New("minimum prompt and output lengths must be at least 1 token")
	case d.MaxPromptTokens < d.MinPromptTokens:
		return fmt.Errorf("maximum prompt length %d is below the minimum %d", d.MaxPromptTokens, d.MinPromptTokens)
	case d.MaxTotalTokens < d.MinPromptTokens+d.MinOutputTokens:
		return fmt.Errorf("maximum total length %d is below the minimum prompt+output %d", d.MaxTotalTokens, d.MinPromptTokens+d.MinOutputTokens)
	case s.MaxTurns < 0:
		return errors.New("maximum turns must not be negative")
	}
	return nil
}

// ReadFile samples the requests from the file at path; see Read.
func (s *ShareGPT) ReadFile(ctx context.Context, path string, tok Tokenizer) ([]Request, bool, error) {
	in, err := OpenInput(ctx, path, 0)
	if err != nil {
		return nil, false, fmt.Errorf("open dataset: %w", err)
	}
	defer in.Close()
	return s.Read(ctx, in, path, tok)
}

// Read samples Count requests from a ShareGPT stream; name is used in error messages.
// Request i is the i-th chosen conversation in shuffled order, with InputTokens measured.
// With tok == nil lengths are estimated (one token per word) and exact is false.
// Fewer valid conversations than Count is an error saying how many there are.
func (s *ShareGPT) Read(ctx context.Context, r io.Reader, name string, tok Tokenizer) (reqs []Request, exact bool, err error) {
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	d := s.WithDefaults()
	tok, exact = orWords(tok)
	measure := func(ctx context.Context, turns []sgTurn) (Request, bool, error) {
		prompt, answer := turns[0].text, turns[1].text
		in, err := tok.Count(ctx, prompt)
		if err != nil || in < d.MinPromptTokens || in > d.MaxPromptTokens {
			return Request{}, false, err
		}
		out, err := tok.Count(ctx, answer)
		if err != nil || out < d.MinOutputTokens || in+out > d.MaxTotalTokens {
			return Request{}, false, err
		}
		r := Request{InputTokens: in, OutputTokens: out}
		if s.Chat {
			r.Messages = []Message{{Role: "user", Content: prompt}}
		} else {
			r.Prompt = prompt
		}
		return r, true, nil
	}
	reqs, err = sampleShareGPT(ctx, s, r, name, firstPair, measure)
	for i := range reqs {
		reqs[i].ID = i
	}
	return reqs, exact, err
}

// sgItem is one conversation as decoded; pointers tell a missing field from an empty one.
type sgItem struct {
	Conversations *[]struct {
		From  *string `json:"from"`
		Value *string `json:"value"`
	} `json:"conversations"`
}

// sgTurn is one turn with its role resolved.
type sgTurn struct {
	user bool // false: the assistant
	text string
}

// sgRole maps ShareGPT's "from" to a side; ok is false for a role that is neither (such as
// "system"), which ends a run of alternating turns.
func sgRole(from string) (user, ok bool) {
	switch strings.ToLower(from) {
	case "human", "user":
		return true, true
	case "gpt", "assistant", "chatgpt", "bing", "bard", "model":
		return false, true
	}
	return false, false
}

// alternating returns the longest run of user, assistant, user, assistant … turns starting at
// the first user turn, cut to whole pairs (and to maxPairs pairs when it is positive).
func alternating(it *sgItem, maxPairs int) []sgTurn {
	var out []sgTurn
	for _, t := range *it.Conversations {
		user, ok := sgRole(*t.From)
		if len(out) == 0 && !(ok && user) {
			continue // before the first human turn
		}
		if !ok || user != (len(out)%2 == 0) || (maxPairs > 0 && len(out) == 2*maxPairs) {
			break
		}
		out = append(out, sgTurn{user: user, text: *t.Value})
	}
	return out[:len(out)/2*2]
}

// firstPair is vLLM's rule: the first human turn and the gpt turn that follows it.
func firstPair(it *sgItem, _ int) []sgTurn {
	if len(*it.Conversations) < 2 {
		return nil
	}
	return alternating(it, 1)
}

// scanShareGPT streams the items of a top-level JSON array to each, with their index and the
// byte offset where the decoder found them, checking the fields every item must have.
func scanShareGPT(r io.Reader, name string, maxBytes int, each func(idx int, it *sgItem) error) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRecordBytes
	}
	win := &windowReader{r: skipBOM(r), max: maxBytes}
	dec := json.NewDecoder(win)
	bad := func(idx int, off int64, field string, err error) error {
		return &InputError{File: name, Item: idx, Offset: off, Field: field, Err: err}
	}
	win.limit = int64(maxBytes)
	t, err := dec.Token()
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError // a top-level number too large for a float64: not an array either
	switch {
	case err != nil && !errors.Is(err, io.EOF) && !errors.As(err, &syn) && !errors.As(err, &typ):
		return bad(0, 0, "", err) // the read failed: too large, interrupted, an I/O error
	case err != nil || t != json.Delim('['):
		return bad(0, 0, "", errors.New("not a JSON array of conversations"))
	}
	idx := 0
	for ; ; idx++ {
		win.limit = dec.InputOffset() + int64(maxBytes)
		off := dec.InputOffset()
		if !dec.More() {
			break
		}
		var it sgItem
		if err := dec.Decode(&it); err != nil {
			return jsonError(name, idx, off, err)
		}
		if field := missingField(&it); field != "" {
			return bad(idx, off, field, errors.New("missing"))
		}
		if err := each(idx, &it); err != nil {
			return err
		}
	}
	off := dec.InputOffset()
	if t, err := dec.Token(); err != nil || t != json.Delim(']') {
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("unexpected end of the array (truncated file?)")
		}
		return jsonError(name, idx, off, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad(idx, dec.InputOffset(), "", errors.New("data after the array"))
	}
	return nil
}

// missingField names the first field ShareGPT needs that the item lacks ("" when none).
func missingField(it *sgItem) string {
	if it.Conversations == nil {
		return `"conversations"`
	}
	for i, t := range *it.Conversations {
		switch {
		case t.From == nil:
			return fmt.Sprintf(`"conversations"[%d]."from"`, i)
		case t.Value == nil:
			return fmt.Sprintf(`"conversations"[%d]."value"`, i)
		}
	}
	return ""
}

// jsonError turns a decoder error into an InputError, with the most precise offset known.
func jsonError(name string, idx int, off int64, err error) error {
	e := &InputError{File: name, Item: idx, Offset: off, Err: err}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		e.Offset = syn.Offset
	case errors.As(err, &typ):
		e.Offset, e.Field = typ.Offset, typ.Field
		e.Err = typeError(typ)
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Err = errors.New("unexpected end of file inside the item (truncated file?)")
	}
	return e
}
