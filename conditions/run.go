package conditions

import (
	"fmt"
	"strconv"
	"time"

	"servebench/record"
)

// FromHeader derives the conditions a records file's header states by itself: the workload
// (hash, API, lengths, seed, how prompt lengths were measured), the sampling and the load.
// They are a pure function of the header, so files written before conditions were recorded
// can still be compared.
func FromHeader(h *record.Header) Set {
	var f facts
	w := h.Workload
	f.put(WorkloadHash, w.Hash)
	f.put("workload.api", h.Target.API)
	f.put("workload.source", w.Source)
	f.put("workload.prompts", w.Count)
	f.put("workload.seed", w.Seed)
	f.put(WorkloadNonce, w.Nonce)
	f.put("workload.prompt_lengths", w.PromptLengths)
	f.put("workload.tokenizer", w.Tokenizer)
	// a dataset by name and content, and the prefix reuse the workload itself implies
	f.put("workload.dataset", w.Dataset)
	f.put("workload.dataset_sha256", w.DatasetSHA256)
	if w.ReusableShare > 0 {
		f.put("workload.reusable_share", strconv.FormatFloat(w.ReusableShare, 'f', 4, 64))
	}
	c := h.Config
	if c == nil {
		return Set(f)
	}
	if w.Source == "synthetic" {
		f.put("workload.input_tokens", c["input_tokens"])
		f.put("workload.range_ratio", c["range_ratio"])
		for _, k := range []string{"input_dist", "output_dist", "lengths"} { // drawn lengths (runspec/lengths.go)
			f.put("workload."+k, c[k])
		}
	}
	for _, k := range []string{"prefix_groups", "prefix_tokens", "prefix_order", "block_tokens", "lora_modules", "lora_selection", "images", "image_format", "image_files", "audio"} {
		f.put("workload."+k, c[k])
	}
	// the setting is what was asked only where the workload is built from it; a dataset or a
	// trace brings its own lengths (written as their distribution)
	if trace, _ := c["trace"].(string); (w.Dataset == "" && trace == "") || w.Lengths == nil {
		f.put("workload.output_tokens", c["output_tokens"])
	} else {
		d := w.Lengths.Output
		f.put("workload.output_tokens", fmt.Sprintf("mean %s, p50 %s, max %d",
			strconv.FormatFloat(d.Mean, 'f', 1, 64), strconv.FormatFloat(d.P50, 'f', 1, 64), d.Max))
	}
	f.put("workload.fixed_output", c["fixed_output"])
	// a router that keeps a session on one replica by its key serves it from one cache
	f.put("workload.session_header", c["session_header"])
	// files written before the salt existed sent none
	f.put("sampling.cache_salt", stringOr(c, "cache_salt", "none"))
	for _, k := range []string{"temperature", "top_p", "extra_body"} {
		f.put("sampling."+k, stringOr(c, k, "server default"))
	}
	loadConditions(&f, c, h.Load)
	launchConditions(&f, c)
	// how events were stamped (client.Arrivals); files written before the kernel's receive
	// times were used were stamped at the read
	f.put("measurement.arrival_clock", stringOr(c, "arrival_clock", "read"))
	// and how requests were stamped sent (client.Sends); before kernel send times, at the write
	f.put("measurement.send_clock", stringOr(c, "send_clock", "write"))
	return Set(f)
}

// stringOr is the string setting c[key], or def when it is absent or empty.
func stringOr(c map[string]any, key, def string) string {
	if v, _ := c[key].(string); v != "" {
		return v
	}
	return def
}

// loadConditions states the load shape: closed loop (users) or open loop (rate, arrivals,
// cap), and the stop rule.
func loadConditions(f *facts, c map[string]any, ld *record.Load) {
	rate, _ := c["rate"].(float64)
	switch {
	case ld != nil && ld.Open && rate <= 0:
		// a ramp or a replayed trace (a --trace file, a Mooncake or BurstGPT dataset): open,
		// on a schedule that the workload hash and the trace's own conditions pin down
		f.put("load.mode", "open loop")
		f.put("load.max_concurrency", c["max_concurrency"])
		f.put("load.ramp", c["ramp"])
		if ld.Arrivals > 0 {
			f.put("load.arrivals", ld.Arrivals)
		}
	case rate > 0:
		f.put("load.mode", "open loop")
		f.put("load.rate", rate)
		f.put("load.arrival", c["arrival"])
		if c["arrival"] == "gamma" {
			f.put("load.burstiness", c["burstiness"])
		}
		f.put("load.max_concurrency", c["max_concurrency"])
	default:
		f.put("load.mode", "closed loop")
		f.put("load.concurrency", c["concurrency"])
	}
	f.put("load.stages", c["stages"]) // run --stages (runspec/stages.go)
	f.put("load.requests", c["requests"])
	if d, ok := c["duration"].(float64); ok && d > 0 {
		f.put("load.duration", time.Duration(d).String())
	}
	f.put("load.warmup", c["warmup"])
}
