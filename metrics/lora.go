package metrics

import "servebench/record"

// A LoRA mix (--lora-modules) is broken down by adapter: the model field each request named
// (Record.Adapter). Throughputs divide by the run's whole window, which every adapter's
// requests share, so the adapters' throughputs add up to the run's.
func init() {
	RegisterKey(Key{
		Name: "adapter", Plural: "adapters", Title: "LoRA adapters",
		Note: "per LoRA adapter, the request's model field; latencies in ms, ITL per event; throughputs over the run's whole window, so they add up to the run's",
		Of:   func(_ *record.Header, r *record.Record) (string, bool) { return r.Adapter, r.Adapter != "" },
	})
}
