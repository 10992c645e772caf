package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Multi-turn sessions. Each turn sends the whole history: the earlier user turns and the
// answers, then the new user turn. The answers in the history are the session's own fixed
// texts (a dataset's, or synthetic ones of the asked length), not what the server answered:
// so every turn's prompt is known before the run, the workload is hashed and replayed exactly
// like any other, and a prefix cache sees exactly the growth a real conversation gives it.

// SyntheticSessions makes Count seeded sessions of Turns turns: each user turn UserTokens
// tokens, each answer OutputTokens.
type SyntheticSessions struct {
	Count, Turns, UserTokens, OutputTokens int
	Seed                                   int64
	Nonce                                  uint64 // Synthetic.Nonce of every turn's text
}

// Validate checks the shape.
func (s *SyntheticSessions) Validate() error {
	if s.Count < 1 || s.Turns < 1 || s.UserTokens < 1 || s.OutputTokens < 1 {
		return errors.New("sessions need at least 1 session, 1 turn, and user and answer lengths of at least 1 token")
	}
	return nil
}

// Generate builds the sessions' texts: user turns and answers of exact length with tok
// (approximate, one token per word, without).
func (s *SyntheticSessions) Generate(ctx context.Context, tok Tokenizer) ([]Session, bool, error) {
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	users := Synthetic{Count: s.Count * s.Turns, InputTokens: s.UserTokens, OutputTokens: s.OutputTokens, Seed: s.Seed, Nonce: s.Nonce}
	answers := Synthetic{Count: s.Count * s.Turns, InputTokens: s.OutputTokens, OutputTokens: 1, Seed: s.Seed + 1, Nonce: s.Nonce}
	u, exactU, err := users.Generate(ctx, tok)
	if err != nil {
		return nil, false, err
	}
	a, exactA, err := answers.Generate(ctx, tok)
	if err != nil {
		return nil, false, err
	}
	out := make([]Session, s.Count)
	for i := range out {
		out[i].ID = i
		for k := range s.Turns {
			j := i*s.Turns + k
			out[i].Turns = append(out[i].Turns, Turn{User: u[j].Prompt, Assistant: a[j].Prompt,
				UserTokens: s.UserTokens, OutputTokens: s.OutputTokens})
		}
	}
	return out, exactU && exactA, nil
}

// SessionRequests lays sessions out as requests, session by session and turn by turn, session
// i as Session i+1 (like Turn, Session counts from 1: 0 is a request of its own, and the
// records leave a zero out, so a session 0 would lose its id). Chat
// requests carry the history as messages; completion requests as a rendered transcript
// ("User: …\nAssistant: …\n…User: …\nAssistant:"), measured with tok for its exact length.
func SessionRequests(ctx context.Context, sessions []Session, chat bool, tok Tokenizer) ([]Request, error) {
	var out []Request
	for si, s := range sessions {
		var msgs []Message
		var text strings.Builder
		for k, t := range s.Turns {
			r := Request{ID: len(out), Session: si + 1, Turn: k + 1, OutputTokens: t.OutputTokens}
			msgs = append(msgs, Message{Role: "user", Content: t.User})
			if chat {
				r.Messages = append([]Message(nil), msgs...)
			} else {
				fmt.Fprintf(&text, "User: %s\nAssistant:", t.User)
				r.Prompt = text.String()
				if tok != nil {
					n, err := tok.Count(ctx, r.Prompt)
					if err != nil {
						return nil, err
					}
					r.InputTokens = n
				}
				fmt.Fprintf(&text, " %s\n", t.Assistant)
			}
			msgs = append(msgs, Message{Role: "assistant", Content: t.Assistant})
			out = append(out, r)
		}
	}
	return out, nil
}
