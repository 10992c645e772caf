package load

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"servebench/record"
)

// schedMetric is the runtime's histogram of how long runnable goroutines waited to run: when
// it grows, every timestamp we take may include our own delay, not the server's.
const schedMetric = "/sched/latencies:seconds"

// QualitySampler watches the load generator's own health during a run: the Go scheduler's
// latency and the process's CPU use, sampled once a second on its own goroutine (nothing on
// the request path). Start it before the run and Stop it after.
type QualitySampler struct {
	// Interval between CPU samples (default 1 s).
	Interval time.Duration

	stop   chan struct{}
	done   chan struct{}
	start  metrics.Float64Histogram
	cpu0   time.Duration
	wall0  time.Time
	mu     sync.Mutex
	cpuMax float64
}

// Start takes the first readings and starts sampling.
func (q *QualitySampler) Start() {
	if q.Interval <= 0 {
		q.Interval = time.Second
	}
	q.start = readSched()
	q.cpu0, q.wall0 = processCPU(), time.Now()
	q.stop, q.done = make(chan struct{}), make(chan struct{})
	go q.loop()
}

func (q *QualitySampler) loop() {
	defer close(q.done)
	t := time.NewTicker(q.Interval)
	defer t.Stop()
	cpu, wall := q.cpu0, q.wall0
	for {
		select {
		case <-q.stop:
			return
		case now := <-t.C:
			c := processCPU()
			share := cpuShare(c-cpu, now.Sub(wall))
			q.mu.Lock()
			q.cpuMax = max(q.cpuMax, share)
			q.mu.Unlock()
			cpu, wall = c, now
		}
	}
}

// Stop ends sampling and returns the run's figures. CPU figures are zero where the platform
// does not report process CPU time.
func (q *QualitySampler) Stop() *record.Quality {
	close(q.stop)
	<-q.done
	end := readSched()
	cpu := processCPU() - q.cpu0
	mean := cpuShare(cpu, time.Since(q.wall0))
	q.mu.Lock()
	defer q.mu.Unlock()
	qu := &record.Quality{CPUMean: mean, CPUMax: max(q.cpuMax, mean), Cores: runtime.GOMAXPROCS(0)}
	counts, bounds := histDiff(q.start, end)
	qu.SchedP50 = histQuantile(counts, bounds, 0.50) * 1e9
	qu.SchedP99 = histQuantile(counts, bounds, 0.99) * 1e9
	qu.SchedMax = histQuantile(counts, bounds, 1) * 1e9
	return qu
}

// cpuShare is CPU time per wall time as a share of the cores Go may use.
func cpuShare(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds() / float64(runtime.GOMAXPROCS(0))
}

func readSched() metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return metrics.Float64Histogram{}
	}
	h := s[0].Value.Float64Histogram()
	return metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// histDiff is the histogram of what happened between two cumulative readings.
func histDiff(a, b metrics.Float64Histogram) ([]uint64, []float64) {
	if len(a.Counts) != len(b.Counts) {
		return b.Counts, b.Buckets
	}
	d := make([]uint64, len(b.Counts))
	for i := range d {
		d[i] = b.Counts[i] - a.Counts[i]
	}
	return d, b.Buckets
}

// histQuantile is the upper bound of the bucket holding quantile p (the lower bound for the
// open last bucket), so it never understates; 0 for an empty histogram.
func histQuantile(counts []uint64, bounds []float64, p float64) float64 {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p * float64(total)))
	rank = max(rank, 1)
	var cum uint64
	for i, c := range counts {
		cum += c
		if cum >= rank {
			if hi := bounds[i+1]; !math.IsInf(hi, 1) {
				return hi
			}
			return bounds[i]
		}
	}
	return 0
}
