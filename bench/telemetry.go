package bench

import (
	"os/exec"

	"servebench/conditions"
	"servebench/conditions/capture"
	"servebench/runspec"
	"servebench/telemetry"
)

// newScraper is the session's telemetry scraper: the server family's Prometheus endpoint
// (when it has one), every --scrape URL, and this machine's GPUs when the server runs here;
// nil with --no-scrape or nothing to sample.
func (b *Session) newScraper() *telemetry.Scraper {
	s := &b.spec
	if s.NoScrape {
		return nil
	}
	var srcs []telemetry.Source
	family := ""
	for _, c := range b.hdr.Conditions {
		if c.Key == conditions.ServerFamily && (c.Source == conditions.Detected || c.Source == conditions.Declared) {
			family = c.Value
		}
	}
	if src, note, ok := telemetry.DefaultSource(family, s.API, b.target.BaseURL); ok {
		srcs = append(srcs, src)
	} else if len(s.Scrape) == 0 {
		b.logf("%s", note)
	}
	for _, u := range s.Scrape {
		srcs = append(srcs, telemetry.Source{URL: u})
	}
	for i := range srcs {
		srcs[i].Name = runspec.RedactURL(srcs[i].URL)
	}
	f := telemetry.DefaultFilter()
	f.All = s.ScrapeAll
	return telemetry.New(telemetry.Config{Sources: srcs, Interval: s.ScrapeInterval, Filter: f,
		Insecure: s.Insecure, Note: func(n string) { b.logf("%s", n) }, GPU: localSMI(b.target.BaseURL)})
}

// localSMI is the nvidia-smi to sample the GPUs with: only when the server's URL is on this
// machine (a remote server's energy is not drawn by our GPUs) and nvidia-smi is on PATH.
func localSMI(base string) string {
	if !capture.IsLoopback(base) {
		return ""
	}
	p, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return ""
	}
	return p
}

// writeTelemetry stops the run's scrapes (taking the last sample after its last request,
// unless the run was cancelled hard) and writes its samples just before the run-end line.
// They are written here, not as they are taken, because the records writer belongs to the
// sink goroutine while the run lasts; so a crash during a run loses that run's telemetry (its
// records are flushed every second), never an earlier run's.
func (b *Session) writeTelemetry(run int, final bool) error {
	samples := b.tel.Stop(final)
	for _, smp := range samples {
		t := smp.To(b.t0, run)
		if err := b.w.WriteTelemetry(&t); err != nil {
			return b.writeErr(err)
		}
		b.hdr.Telemetry = append(b.hdr.Telemetry, t)
	}
	return nil
}

// remoteGPUConditions records what the first scrape of a dcgm-exporter says about the GPUs
// (model, UUIDs, driver, MIG profile, and the settings its counters include) among the
// conditions, where nothing on this machine told them: a remote server's GPUs are then
// conditions as a local one's are.
func (b *Session) remoteGPUConditions() {
	set := conditions.Set(b.hdr.Conditions)
	added := false
	for _, t := range b.tel.Latest() {
		for _, c := range conditions.GPUFromDCGM(t.Series) {
			if set.Value(c.Key) == "" {
				set.Put(c)
				added = true
			}
		}
	}
	if added {
		set.Sort()
		b.hdr.Conditions = set
	}
}
