// Command steadyrec trims records files to the fields the steady-state check reads and
// stores them (NAME.rec.xz, package compare/recorded: columns, xz-compressed, events to
// 10 µs), for the recorded sets the metrics package judges in its tests
// (metrics/testdata/recorded; docs/steady-evidence.md):
//
//	go run ./internal/steadyrec -o metrics/testdata/recorded/SET DIR/*.jsonl
//
// Storing takes liblzma's xz command. A trimmed record keeps its phase, times, events, lengths and error class; the header keeps
// its command, target, configuration and load (the workload's prompts go); the run-end lines
// keep the client's health windows.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"servebench/compare/recorded"
	"servebench/record"
)

func main() {
	out := flag.String("o", "", "directory to write NAME.jsonl.gz into")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: steadyrec -o DIR RECORDS.jsonl ...")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "steadyrec:", err)
		os.Exit(1)
	}
	for _, p := range flag.Args() {
		dst := filepath.Join(*out, strings.TrimSuffix(filepath.Base(p), ".jsonl")+recorded.Ext)
		if err := trim(p, dst); err != nil {
			fmt.Fprintf(os.Stderr, "steadyrec: %s: %v\n", p, err)
			os.Exit(1)
		}
	}
}

// trim writes src's records, trimmed, to dst (stored).
func trim(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr, all, err := record.ReadAll(f)
	if err != nil {
		return err
	}
	recs := make([]record.Record, len(all))
	for i := range all {
		recs[i] = keep(&all[i])
	}
	h := *hdr
	h.Workload = record.Workload{Source: h.Workload.Source, Count: h.Workload.Count, Seed: h.Workload.Seed}
	h.Conditions, h.Observed = nil, nil
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	if err := w.WriteHeader(&h); err != nil {
		return err
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			return err
		}
	}
	for i := range h.Ends {
		e := h.Ends[i]
		if err := w.WriteRunEnd(&e); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var packed bytes.Buffer
	if err := recorded.Pack(&packed, &buf); err != nil {
		return err
	}
	return os.WriteFile(dst, packed.Bytes(), 0o644)
}

// keep is r with only what the steady check and the summary's counts read.
func keep(r *record.Record) record.Record {
	return record.Record{ID: r.ID, Run: r.Run, Phase: r.Phase, Shard: r.Shard, Stage: r.Stage,
		Scheduled: r.Scheduled, Dispatched: r.Dispatched, Sent: r.Sent, Headers: r.Headers, FirstEvent: r.FirstEvent, Done: r.Done, Events: r.Events,
		InputTokens: r.InputTokens, MaxTokens: r.MaxTokens, FixedOutput: r.FixedOutput,
		PromptTokens: r.PromptTokens, PromptTokensSource: r.PromptTokensSource, OutputTokens: r.OutputTokens, OutputTokensSource: r.OutputTokensSource,
		Status: r.Status, ErrorClass: r.ErrorClass}
}
