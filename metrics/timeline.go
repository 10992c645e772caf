package metrics

import (
	"servebench/record"
)

// Timeline is the server's figures over a run's time, for charts beside the client's: each a
// list of (T ns since t0, value) in time order, from the same families as Server's figures.
// A figure the samples do not carry is nil.
type Timeline struct {
	Waiting, Running []TimePoint // requests, summed over label sets
	KVUsage          []TimePoint // share, 1 = full; max over label sets
	GPUPower         []TimePoint // W, all GPUs summed (nvidia-smi, or a scraped dcgm-exporter)
}

// TimePoint is one sample of a Timeline figure.
type TimePoint struct {
	T int64
	V float64
}

// ServerTimeline is the timeline of telemetry samples (of any runs: T is on the file's one
// clock).
func ServerTimeline(samples []record.Telemetry) Timeline {
	ok := okSamples(samples)
	return Timeline{
		Waiting:  roleSeries(ok, roles.waiting, sumFold),
		Running:  roleSeries(ok, roles.running, sumFold),
		KVUsage:  roleSeries(ok, roles.kv, maxFold),
		GPUPower: roleSeries(ok, []string{record.GPUPower, "DCGM_FI_DEV_POWER_USAGE"}, sumFold),
	}
}

// roleSeries is every value of the first family of names a source exposes (sources by
// name, as roleGauge picks them).
func roleSeries(ok map[string][]*record.Telemetry, names []string, fold func(float64, float64, bool) float64) []TimePoint {
	for _, src := range sourcesOf(ok) {
		for _, name := range names {
			var pts []TimePoint
			for _, t := range ok[src] {
				if v, found := valueOf(t, name, fold); found {
					pts = append(pts, TimePoint{T: t.T, V: v})
				}
			}
			if len(pts) > 0 {
				return pts
			}
		}
	}
	return nil
}
