package workload

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Session is a whole conversation, replayed turn by turn by a multi-turn runner: turn k's
// request is the history (turns before it, with their recorded assistant replies) plus
// User, asking for OutputTokens.
type Session struct {
	ID    int    `json:"id"`
	Turns []Turn `json:"turns"`
}

// Turn is one user message and the reply the dataset recorded for it.
type Turn struct {
	User      string `json:"user"`
	Assistant string `json:"assistant"`
	// UserTokens is User's length in tokens alone (without the history or a chat template).
	UserTokens int `json:"user_tokens,omitempty"`
	// OutputTokens is Assistant's length in tokens (at least 1): the output to ask for.
	OutputTokens int `json:"output_tokens"`
}

// ReadSessionsFile samples sessions from the file at path; see ReadSessions.
func (s *ShareGPT) ReadSessionsFile(ctx context.Context, path string, tok Tokenizer) ([]Session, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("open dataset: %w", err)
	}
	defer f.Close()
	return s.ReadSessions(ctx, f, path, tok)
}

// ReadSessions samples Count whole conversations as sessions, shuffled with Seed as Read
// does. A session is the longest run of alternating human, gpt turns from the first human
// turn (a "system" or other turn ends it), cut to MaxTurns pairs when MaxTurns > 0. A
// conversation without one complete pair is dropped; the per-pair token filters of Read do
// not apply (a long conversation is what a multi-turn run is for). With tok == nil lengths
// are estimated (one token per word) and exact is false.
func (s *ShareGPT) ReadSessions(ctx context.Context, r io.Reader, name string, tok Tokenizer) (sessions []Session, exact bool, err error) {
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	tok, exact = orWords(tok)
	measure := func(ctx context.Context, turns []sgTurn) (Session, bool, error) {
		var sess Session
		for k := 0; k+1 < len(turns); k += 2 {
			u, err := tok.Count(ctx, turns[k].text)
			if err != nil {
				return Session{}, false, err
			}
			a, err := tok.Count(ctx, turns[k+1].text)
			if err != nil {
				return Session{}, false, err
			}
			sess.Turns = append(sess.Turns, Turn{User: turns[k].text, Assistant: turns[k+1].text,
				UserTokens: u, OutputTokens: max(a, 1)})
		}
		return sess, true, nil
	}
	sessions, err = sampleShareGPT(ctx, s, r, name, alternating, measure)
	for i := range sessions {
		sessions[i].ID = i
	}
	return sessions, exact, err
}
