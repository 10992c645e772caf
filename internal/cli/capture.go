package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"servebench/capture"
	"servebench/output"
	"servebench/tokenizer"
)

const captureExamples = `  servebench capture --upstream http://10.0.0.5:8000 -o traffic.jsonl   # clients use http://127.0.0.1:8001
  servebench capture --listen 127.0.0.1:9000 --upstream http://127.0.0.1:8000 --block-tokens 16 -o t.jsonl
  servebench run --url http://10.0.0.5:8000 --dataset mooncake:traffic.jsonl   # replay it`

// captureFlags are the capture command's settings.
type captureFlags struct {
	listen, upstream, out, tokenizer, sessionHeader string
	blockTokens                                     int
	keepText, force                                 bool
}

func newCaptureCmd(std *streams) *cobra.Command {
	var f captureFlags
	cmd := &cobra.Command{
		Use:   "capture --upstream URL -o FILE",
		Short: "Proxy clients to a server and record their requests as a replayable Mooncake trace",
		Long: `capture is a transparent streaming proxy: clients talk to it as to the server (every path, header and
status passes through; streamed events are flushed as they come). Each request to a generation endpoint
(OpenAI completions, chat and responses, Anthropic messages, llama.cpp, Ollama) is recorded as a line of a
Mooncake trace: its arrival, API, session key, prompt and output tokens, and the prompt's prefix
structure as block hashes, with no prompt text unless --keep-text. run --dataset mooncake:FILE
replays it (with the same --block-tokens). Ctrl-C stops and keeps every request captured.`,
		Example: captureExamples,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runCapture(cmd.Context(), std, &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8001", "address to listen on for clients (loopback unless you name another)")
	fs.StringVar(&f.upstream, "upstream", "", "the server's base URL, e.g. http://127.0.0.1:8000 (required)")
	fs.StringVarP(&f.out, "output", "o", "", "the trace file to write (JSONL; default servebench-capture-TIME.jsonl)")
	fs.BoolVar(&f.force, "force", false, "replace an existing output file")
	fs.IntVar(&f.blockTokens, "block-tokens", 512, "tokens a prefix block (hash id) covers; replay with the same run --block-tokens")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "count and hash prompts with this tokenizer.json instead of the upstream's /tokenize")
	fs.BoolVar(&f.keepText, "keep-text", false, "also record each prompt's text and the session keys as they are (default: neither)")
	fs.StringVar(&f.sessionHeader, "session-header", "", "a request header that carries the session key (else the body's session_id, conversation or user)")
	return cmd
}

// runCapture proxies until ctx ends, then writes what it captured.
func runCapture(ctx context.Context, std *streams, f *captureFlags) error {
	if f.out == "" {
		f.out = "servebench-capture-" + time.Now().UTC().Format("20060102T150405Z") + ".jsonl"
	}
	if err := output.NotInput("-o", f.out, f.tokenizer); err != nil {
		return usageErr("%v", err)
	}
	cfg, err := f.config(std.stderr)
	if err != nil {
		return err
	}
	file, err := output.Create(f.out, output.Options{Replace: f.force})
	if errors.Is(err, output.ErrExists) {
		return usageErr("output file %s exists: choose another -o, or --force to replace it", f.out)
	} else if err != nil {
		return fmt.Errorf("output file: %w", err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		file.Abort()
		return usageErr("--listen %s: %v", f.listen, err)
	}
	rec := capture.NewRecorder(file)
	p, err := capture.New(cfg, rec)
	if err != nil {
		file.Abort()
		return usageErr("%v", err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(std.stderr, "servebench capture: listening on %s, which other machines can reach\n", addr)
	}
	fmt.Fprintf(std.stderr, "servebench capture: proxying http://%s to %s, recording to %s (Ctrl-C stops)\n", addr, cfg.Upstream.Redacted(), f.out)
	<-ctx.Done()
	// stop taking requests, let those in flight finish for a while (a second Ctrl-C cuts
	// them), then count the last ones and write the file
	sctx, cancel := context.WithTimeout(hardStop(ctx), 10*time.Second)
	_ = srv.Shutdown(sctx)
	cancel()
	srv.Close()
	p.Wait()
	for _, n := range p.Notes() {
		fmt.Fprintln(std.stderr, "servebench capture: "+n)
	}
	if err := rec.Err(); err != nil {
		path := file.Keep()
		return fmt.Errorf("%v (the lines written so far are in %s)", err, path)
	}
	if err := file.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(std.stderr, "servebench capture: %d requests captured to %s%s\n", rec.Lines, f.out, notRecorded(rec.Skipped))
	return nil
}

// config checks the flags and builds the proxy's settings.
func (f *captureFlags) config(log io.Writer) (capture.Config, error) {
	var cfg capture.Config
	if f.upstream == "" {
		return cfg, usageErr("--upstream is required: the server's base URL, e.g. http://127.0.0.1:8000")
	}
	u, err := url.Parse(f.upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, usageErr("--upstream %q: want an http:// or https:// URL", f.upstream)
	}
	if f.blockTokens < 1 || f.blockTokens > 1<<20 {
		return cfg, usageErr("--block-tokens %d: want 1 to %d", f.blockTokens, 1<<20)
	}
	cfg = capture.Config{Upstream: u, BlockTokens: f.blockTokens, KeepText: f.keepText, SessionHeader: f.sessionHeader, Log: log}
	if f.tokenizer != "" {
		tk, err := tokenizer.Load(f.tokenizer)
		if err != nil {
			return cfg, usageErr("--tokenizer: %v", err)
		}
		cfg.Encoder = capture.EncoderFunc(func(_ context.Context, text string) ([]int, bool, error) {
			return tk.Encode(text), true, nil
		})
	}
	return cfg, nil
}

// notRecorded says what was left out, by reason.
func notRecorded(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return "; not recorded: " + strings.Join(parts, ", ")
}
