// Package pooling holds the backends of the two non-generating APIs servebench measures:
// OpenAI-compatible embeddings (POST /v1/embeddings: {"input": [texts]}, answered with one
// vector per input) and rerank (POST /v1/rerank: {"query", "documents", "top_n"}, answered
// with a relevance score per document; llama.cpp --reranking, vLLM, Jina and Cohere
// shapes). Neither streams: the answer is one JSON object, so a request has no content
// events, no TTFT and no inter-token latency; its latency is the time from the request's
// write to the end of the answer's body (record: sent to done).
//
// Inputs per request: each workload prompt is cut into Batch pieces of about equal word
// counts (rerank: a query and Batch documents), so the workload's input length is the
// tokens of a whole request and the prompt-length machinery (tokenizer, datasets, hashes)
// is the same as for generation. The server's usage.prompt_tokens is the request's count.
package pooling

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"servebench/client"
	"servebench/record"
)

// Names accepted by --api.
const (
	APIEmbeddings = "openai-embeddings"
	APIRerank     = "rerank"
)

// MaxBody bounds the answer read: 4096-dimension float vectors are about 50 KB of JSON
// each, so a batch of a thousand fits; a larger body is a server that does not stop.
const MaxBody = 256 << 20

// Backend is one pooling API on a target.
type Backend struct {
	// IdleTimeout aborts a request, as class timeout, when no bytes arrive for this long.
	IdleTimeout time.Duration

	target client.Target
	path   string
	batch  int
	body   func(req *client.Request, pieces []string) ([]byte, error)
	// check decodes the answer to a request of n inputs and reports what it says to o.
	check func(data []byte, n int, o client.Observer) *client.Error
	query bool // the first piece is a query, not an input (rerank)
	// maxBody bounds the answer read (MaxBody; smaller in tests)
	maxBody int64
}

// Embeddings returns the embeddings backend on t: batch inputs per request (at least 1).
func Embeddings(t client.Target, opt client.Options) (client.Backend, error) {
	if err := t.CheckURL(APIEmbeddings); err != nil {
		return nil, err
	}
	return &Backend{target: t, path: "/v1/embeddings", IdleTimeout: opt.IdleTimeout, maxBody: MaxBody, batch: max(opt.Batch, 1), body: embedBody, check: embedCheck}, nil
}

// Rerank returns the rerank backend on t: a query and batch documents per request.
func Rerank(t client.Target, opt client.Options) (client.Backend, error) {
	if err := t.CheckURL(APIRerank); err != nil {
		return nil, err
	}
	return &Backend{target: t, path: "/v1/rerank", IdleTimeout: opt.IdleTimeout, maxBody: MaxBody, batch: max(opt.Batch, 1), body: rerankBody, check: rerankCheck,
		query: true}, nil
}

// Do implements client.Backend: one POST, the whole answer read, then decoded. Done is
// stamped when the last byte has been read, before decoding, so decoding a large answer is
// not counted as the server's time; a malformed answer still fails the request.
func (b *Backend) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	n := b.batch
	if b.query {
		n++
	}
	pieces := Split(client.PromptText(req), n)
	body, err := b.body(req, pieces)
	if err != nil {
		return err
	}
	inputs := len(pieces)
	if b.query && inputs > 1 {
		inputs-- // the query is not a document (rerankBody: one piece is both)
	}
	x := client.Exchange{Target: b.target, Path: b.path, Body: body, Accept: "application/json", IdleTimeout: b.IdleTimeout,
		RequestID: req.RequestID, TraceParent: req.TraceParent,
		SessionHeader: req.SessionHeader, SessionKey: req.SessionKey, Read: func(ctx context.Context, r io.Reader, o client.Observer) error {
			client.ReportInputs(o, inputs)
			data, err := io.ReadAll(io.LimitReader(r, b.maxBody+1))
			if err != nil {
				if e := client.ContextError(ctx, b.target, err); e != nil {
					return e
				}
				return &client.Error{Class: record.ErrTruncated, Msg: b.target.Redact(fmt.Sprintf("answer cut after %d bytes: %v", len(data), err))}
			}
			if int64(len(data)) > b.maxBody {
				return &client.Error{Class: record.ErrDecode, Msg: fmt.Sprintf("answer larger than %d bytes", b.maxBody)}
			}
			o.Done()
			if e := b.check(data, inputs, o); e != nil {
				e.Msg = b.target.Redact(e.Msg)
				return e
			}
			return nil
		}}
	return x.Do(ctx, obs)
}

// Split cuts text into n pieces of about equal word counts, in order; fewer when text has
// fewer than n words (a server refuses empty inputs), and one empty piece for empty text.
func Split(text string, n int) []string {
	words := strings.Fields(text)
	n = min(max(n, 1), max(len(words), 1))
	out := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(words)/n, (i+1)*len(words)/n
		out = append(out, strings.Join(words[lo:hi], " "))
	}
	return out
}
