package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// The "server during the window" section: the server's own figures from its Prometheus
// samples beside ours, and in JSON "server_metrics". Nothing when the records hold no
// telemetry.
func init() { RegisterSection("server", 70, serverSection) }

func serverSection(_ *record.Header, s *metrics.Summary) *Section {
	rows := serverRows(s)
	if rows == nil {
		return nil
	}
	return &Section{Name: "server", Title: "Server during the window (its own Prometheus figures)",
		Heading: "server during the window (its own Prometheus figures)",
		Lines:   rows, JSON: []Field{{"server_metrics", serverJSON(s)}}}
}

// labeled is one line of the server section.
type labeled = Line

// serverRows are the lines of the server section, nil without telemetry.
func serverRows(s *metrics.Summary) []labeled {
	sv := s.Server
	if sv == nil {
		return nil
	}
	var rows []labeled
	add := func(label, format string, args ...any) {
		rows = append(rows, labeled{label, fmt.Sprintf(format, args...)})
	}
	for _, src := range sv.Sources {
		add("scrapes", "%s: %d, %d ok%s", src.Source, src.Scrapes, src.OK, scrapeTrouble(src))
	}
	if n := serverSources(sv); n > 1 {
		// several servers (one per shard's simulator, a server and a DCGM exporter): say whose
		// figures follow rather than mixing them
		add("", "%d endpoints answered: each figure below is from the first by name that exposes it", n)
	}
	if g := gaugeLine(sv); g != "" {
		add("queue", "%s", g)
	}
	if k := kvLine(sv); k != "" {
		add("kv cache", "%s", k)
	}
	if sv.PromptTokens != nil || sv.GenerationTokens != nil {
		add("tokens", "%s", tokensLine(s))
	}
	for _, h := range []struct {
		label string
		h     *metrics.HistQuantiles
		ours  string
		st    metrics.Stat
	}{{"server TTFT", sv.TTFT, "servebench TTFT", s.TTFT}, {"server ITL", sv.ITL, "servebench ITL (chunk)", s.ITLChunk},
		{"queue time", sv.Queue, "", metrics.Stat{}}, {"prefill time", sv.Prefill, "", metrics.Stat{}}} {
		if h.ours != "" && !s.Streams() {
			continue // a run that streams nothing has no figure of its own to set beside the server's
		}
		if t := histText(h.h, h.ours, h.st); t != "" {
			add(h.label, "%s", t)
		}
	}
	if !s.Streams() { // speculative decoding and the slow-TTFT attribution are about streamed output
		return append(rows, gpuRows(sv.GPU)...)
	}
	rows = append(rows, specRows(s)...) // specdecode.go
	if a := attributionLine(sv); a != "" {
		add("attribution", "%s", a)
	}
	return append(rows, gpuRows(sv.GPU)...)
}

// tokensLine sets the server's token counters beside ours with what each counts, so that
// they reconcile: the counters move between the scrapes that bracket the window, so they
// count requests that finished in it whatever their phase (warmup ones too), and llama.cpp's
// prompt counter leaves out the tokens it took from its cache; ours are the measured,
// completed requests' usage.
func tokensLine(s *metrics.Summary) string {
	sv := s.Server
	t := fmt.Sprintf("prompt %s, generation %s (server counters between the scrapes around the window: every request they saw finish, warmup too",
		optCount(sv.PromptTokens), optCount(sv.GenerationTokens))
	if sv.CachedTokens != nil {
		t += fmt.Sprintf("; prompt leaves out the %s tokens served from its cache", optCount(sv.CachedTokens))
	}
	t += fmt.Sprintf("); servebench: input %d, output %d (%d measured requests)", s.InputTokens, s.OutputTokens, s.Completed)
	if s.CachedReported > 0 && s.InputTokens > 0 {
		t += fmt.Sprintf(", %d input tokens cached per the server's responses (%.1f%%)", s.CachedPromptTokens, 100*float64(s.CachedPromptTokens)/float64(s.InputTokens))
	}
	return t
}

// serverSources counts the scraped endpoints with a successful sample (the GPU sampler aside).
func serverSources(sv *metrics.Server) int {
	n := 0
	for _, src := range sv.Sources {
		if src.OK > 0 && src.Source != record.GPUSource {
			n++
		}
	}
	return n
}

// gpuRows are the GPU figures of the window: energy (and how it was measured), power and
// J/token of the GPUs charged to the server, then clocks, the driver's clock event reasons,
// utilisation, memory and temperature (only what was read).
func gpuRows(g *metrics.GPU) []labeled {
	if g == nil {
		return nil
	}
	var parts []string
	if g.EnergyJ != nil {
		e := fmt.Sprintf("energy %s J over the window%s", approx(*g.EnergyJ), prefixed(" ", energyHow(g)))
		if g.Coverage < 1 {
			e += fmt.Sprintf(" (samples span %.0f%% of it)", fin(100*g.Coverage))
		}
		parts = append(parts, e)
	}
	if g.MeanPowerW != nil {
		parts = append(parts, fmt.Sprintf("mean %s W", approx(*g.MeanPowerW)))
	}
	if g.MaxPowerW != nil {
		parts = append(parts, fmt.Sprintf("max %s W", approx(*g.MaxPowerW)))
	}
	if g.JoulesPerToken != nil {
		parts = append(parts, fmt.Sprintf("%s J/output token", approx(*g.JoulesPerToken)))
	} else if g.NotCharged != "" {
		parts = append(parts, "no J/token (not the server's GPUs: see the notes)")
	}
	src := "nvidia-smi"
	if g.Source != "" && g.Source != record.GPUSource {
		src = "dcgm-exporter " + g.Source
	}
	count := cmpPlural(len(g.GPUs), "1 GPU", fmt.Sprintf("%d GPUs", len(g.GPUs)))
	if len(g.Charged) > 0 && len(g.Charged) < len(g.GPUs) {
		count += fmt.Sprintf(", energy of GPU %s (the server's, by %s)", strings.Join(g.Charged, ", "), g.ChargedBy)
	}
	rows := []labeled{{"gpu", fmt.Sprintf("%s (%s, %d readings in the window)%s", count, src,
		g.Samples, prefixed(": ", strings.Join(parts, ", ")))}}
	parts = nil
	if g.SMClockMin != nil {
		parts = append(parts, fmt.Sprintf("SM clock %.0f–%.0f MHz", fin(*g.SMClockMin), fin(*g.SMClockMax)))
	}
	if len(g.Throttle) > 0 {
		parts = append(parts, fmt.Sprintf("fell on %s (throttling guessed: see the notes)", cmpPlural(len(g.Throttle), "1 GPU", fmt.Sprintf("%d GPUs", len(g.Throttle)))))
	}
	for _, r := range g.Reasons {
		var names []string
		for _, a := range r.Active {
			names = append(names, fmt.Sprintf("%s %d/%d", a.Name, a.Readings, r.Readings))
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		parts = append(parts, fmt.Sprintf("GPU %s clock event reasons: %s", r.GPU, strings.Join(names, ", ")))
	}
	if g.UtilMean != nil {
		parts = append(parts, fmt.Sprintf("utilisation mean %.0f%%", fin(100**g.UtilMean)))
	}
	if g.MemCopyUtilMean != nil {
		parts = append(parts, fmt.Sprintf("memory-copy utilisation mean %.0f%%", fin(100**g.MemCopyUtilMean)))
	}
	if g.MemMaxB != nil {
		parts = append(parts, fmt.Sprintf("memory max %.1f GiB", fin(*g.MemMaxB/(1<<30))))
	}
	if g.TempMaxC != nil {
		parts = append(parts, fmt.Sprintf("temperature max %.0f °C", fin(*g.TempMaxC)))
	}
	if len(parts) > 0 {
		rows = append(rows, labeled{"gpu state", strings.Join(parts, "; ")})
	}
	return rows
}

// energyHow says how the energy was measured: "(energy counter DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)"
// or "(power.draw.average integrated)".
func energyHow(g *metrics.GPU) string {
	switch g.EnergyMethod {
	case "counter":
		return "(energy counter " + g.EnergyField + ")"
	case "integrated":
		if g.PowerField != "" && g.PowerField != record.GPUPower {
			return "(" + g.PowerField + " integrated)"
		}
		return "(power samples integrated)"
	case "":
		return ""
	}
	return "(" + g.EnergyMethod + ": " + g.EnergyField + ", " + g.PowerField + ")"
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// scrapeTrouble lists failures, cut series, dropped values and thinning, or "".
func scrapeTrouble(src metrics.ScrapeStats) string {
	var parts []string
	if n := src.Scrapes - src.OK; n > 0 {
		reasons := make([]string, 0, len(src.Errors))
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range src.Errors {
				if !yield(k) {
					return
				}
			}
		}) {
			reasons = append(reasons, fmt.Sprintf("%s %d", k, src.Errors[k]))
		}
		parts = append(parts, fmt.Sprintf("%d failed (%s)", n, strings.Join(reasons, ", ")))
	}
	if src.Cut > 0 {
		parts = append(parts, fmt.Sprintf("%d series cut over the per-scrape cap", src.Cut))
	}
	if src.NonFinite > 0 {
		parts = append(parts, fmt.Sprintf("%d NaN or infinite values dropped", src.NonFinite))
	}
	if src.Thinned > 0 {
		parts = append(parts, fmt.Sprintf("%d samples thinned to bound memory", src.Thinned))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func gaugeLine(sv *metrics.Server) string {
	var parts []string
	for _, g := range []struct {
		what string
		st   *metrics.GaugeStat
	}{{"waiting", sv.Waiting}, {"running", sv.Running}} {
		if g.st != nil {
			parts = append(parts, fmt.Sprintf("%s mean %.1f, p50 %s, max %s", g.what, fin(g.st.Mean), trimNum(g.st.P50), trimNum(g.st.Max)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	n := sv.Waiting
	if n == nil {
		n = sv.Running
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" (%d samples in the window)", n.N)
}

func kvLine(sv *metrics.Server) string {
	var parts []string
	if g := sv.KVUsage; g != nil {
		parts = append(parts, fmt.Sprintf("usage mean %.0f%%, p50 %.0f%%, max %.0f%%", fin(100*g.Mean), fin(100*g.P50), fin(100*g.Max)))
	}
	if sv.Preemptions != nil {
		parts = append(parts, fmt.Sprintf("%s preemptions", optCount(sv.Preemptions)))
	}
	if sv.PrefixHitRate != nil {
		parts = append(parts, fmt.Sprintf("prefix cache hit rate %.1f%% (%s of %s prompt tokens)",
			100**sv.PrefixHitRate, optCount(sv.PrefixHits), optCount(sv.PrefixQueries)))
	}
	return strings.Join(parts, "; ")
}

// histText is a server histogram's p50 and p99 in ms, and ours beside them; "" without it.
func histText(h *metrics.HistQuantiles, ours string, st metrics.Stat) string {
	if h == nil {
		return ""
	}
	text := fmt.Sprintf("p50 %s ms (bucket %s–%s), p99 %s ms, n %s",
		msSec(h.P50), msBound(h.P50Lo), msBound(h.P50Hi), msSec(h.P99), trimNum(h.Count))
	if ours != "" {
		text += fmt.Sprintf("; %s p50 %s, p99 %s ms", ours, msP(st, 50), msP(st, 99))
	}
	return text
}

// attributionLine: "TTFT above p90: 94% saw a waiting queue > 0 (others 3%); KV usage max
// 100%, 41 preemptions in the window" — only the parts that were measured.
func attributionLine(sv *metrics.Server) string {
	a := sv.Attribution
	if a == nil || a.Slow == 0 {
		return ""
	}
	out := fmt.Sprintf("TTFT above p90 (%.2f ms): %.0f%% of %d saw a waiting queue > 0", fin(a.P90/1e6), fin(100*float64(a.SlowWaiting)/float64(a.Slow)), a.Slow)
	if a.Rest > 0 {
		out += fmt.Sprintf(" (others %.0f%% of %d)", fin(100*float64(a.RestWaiting)/float64(a.Rest)), a.Rest)
	}
	var tail []string
	if sv.KVUsage != nil {
		tail = append(tail, fmt.Sprintf("KV usage max %.0f%%", fin(100*sv.KVUsage.Max)))
	}
	if sv.Preemptions != nil {
		tail = append(tail, optCount(sv.Preemptions)+" preemptions")
	}
	if len(tail) > 0 {
		out += "; " + strings.Join(tail, ", ") + " in the window"
	}
	return out
}

// msSec formats seconds as ms with two decimals like ours, or ∞ for an unbounded value.
func msSec(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", fin(v*1e3))
}

// msBound formats a bucket bound in seconds as ms without trailing zeros ("250", "2.5").
func msBound(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "∞"
	}
	return trimNum(v * 1e3)
}

func trimNum(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", fin(v)), "0"), ".")
}

func optCount(v *float64) string {
	if v == nil {
		return dash
	}
	return trimNum(*v)
}

// serverJSON is the server section's "server_metrics". Latencies are in ms like ours.
func serverJSON(s *metrics.Summary) *object {
	sv := s.Server
	m := &object{}
	var srcs []*object
	for _, src := range sv.Sources {
		so := &object{}
		so.set("source", src.Source)
		so.set("scrapes", src.Scrapes)
		so.set("ok", src.OK)
		so.set("errors", src.Errors)
		so.set("cut_series", src.Cut)
		so.set("nonfinite_dropped", src.NonFinite)
		so.set("thinned", src.Thinned)
		so.set("max_series", src.MaxSeries)
		srcs = append(srcs, so)
	}
	m.set("sources", srcs)
	m.set("waiting", sv.Waiting)
	m.set("running", sv.Running)
	m.set("kv_cache_usage", sv.KVUsage)
	m.set("preemptions", sv.Preemptions)
	m.set("prompt_tokens", sv.PromptTokens)
	m.set("generation_tokens", sv.GenerationTokens)
	m.set("prefix_cache_queries", sv.PrefixQueries)
	m.set("prefix_cache_hits", sv.PrefixHits)
	m.set("prefix_cache_hit_rate", sv.PrefixHitRate)
	m.set("cached_tokens", sv.CachedTokens)
	if sv.SpecDecode != nil { // only with speculative decoding: other files render as before
		m.set("spec_decode", specJSON(sv.SpecDecode))
	}
	for _, h := range []struct {
		k string
		h *metrics.HistQuantiles
	}{{"ttft", sv.TTFT}, {"itl", sv.ITL}, {"queue", sv.Queue}, {"prefill", sv.Prefill}} {
		m.set(h.k, histJSON(h.h))
	}
	if a := sv.Attribution; a != nil {
		ao := &object{}
		ao.set("ttft_p90_ms", a.P90/1e6)
		ao.set("above_p90", a.Slow)
		ao.set("above_p90_saw_waiting", a.SlowWaiting)
		ao.set("others", a.Rest)
		ao.set("others_saw_waiting", a.RestWaiting)
		m.set("attribution", ao)
	} else {
		m.set("attribution", nil)
	}
	m.set("gpu", gpuJSON(sv.GPU))
	m.set("gauges", sv.Gauges)
	m.set("counters", sv.Counters)
	return m
}

func histJSON(h *metrics.HistQuantiles) *object {
	if h == nil {
		return nil
	}
	ms := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return ptr(v * 1e3)
	}
	o := &object{}
	o.set("name", h.Name)
	o.set("count", h.Count)
	o.set("mean_ms", ms(h.Mean))
	o.set("p50_ms", ms(h.P50))
	o.set("p99_ms", ms(h.P99))
	o.set("p50_bucket_ms", []*float64{ms(h.P50Lo), ms(h.P50Hi)})
	return o
}

// gpuJSON is the GPU figures of the window under server_metrics.gpu; null without samples.
func gpuJSON(g *metrics.GPU) *object {
	if g == nil {
		return nil
	}
	o := &object{}
	o.set("source", g.Source)
	o.set("gpus", g.GPUs)
	o.set("uuids", g.UUIDs)
	o.set("readings", g.Samples)
	o.set("charged_gpus", g.Charged)
	o.set("charged_by", g.ChargedBy)
	o.set("not_charged", g.NotCharged)
	o.set("energy_j", g.EnergyJ)
	o.set("energy_j_by_gpu", g.EnergyByGPU())
	o.set("energy_method", g.EnergyMethod)
	o.set("energy_field", g.EnergyField)
	o.set("power_field", g.PowerField)
	o.set("coverage", g.Coverage)
	o.set("mean_power_w", g.MeanPowerW)
	o.set("max_power_w", g.MaxPowerW)
	o.set("joules_per_output_token", g.JoulesPerToken)
	o.set("sm_clock_min_mhz", g.SMClockMin)
	o.set("sm_clock_max_mhz", g.SMClockMax)
	var falls []*object
	for _, f := range g.Throttle {
		fo := &object{}
		fo.set("gpu", f.GPU)
		fo.set("from_mhz", f.From)
		fo.set("to_mhz", f.To)
		falls = append(falls, fo)
	}
	o.set("sm_clock_falls", falls)
	var reasons []*object
	for _, r := range g.Reasons {
		ro := &object{}
		ro.set("gpu", r.GPU)
		ro.set("busy_readings", r.Readings)
		counts := &object{}
		for _, a := range r.Active {
			counts.set(a.Name, a.Readings)
		}
		ro.set("active", counts)
		reasons = append(reasons, ro)
	}
	o.set("clock_event_reasons", reasons)
	var xids []*object
	for _, x := range g.XID {
		xo := &object{}
		xo.set("gpu", x.GPU)
		xo.set("code", x.Code)
		xids = append(xids, xo)
	}
	o.set("xid_errors", xids)
	o.set("memory_copy_utilization_mean", g.MemCopyUtilMean)
	o.set("utilization_mean", g.UtilMean)
	o.set("memory_used_max_bytes", g.MemMaxB)
	o.set("temperature_max_c", g.TempMaxC)
	return o
}
