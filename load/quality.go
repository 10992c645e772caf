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
	// T0 is the run's start: each sample is also kept as a record.HealthWindow, its end in
	// ns since T0 (none when T0 is zero).
	T0 time.Time

	stop    chan struct{}
	done    chan struct{}
	start   metrics.Float64Histogram
	cpu0    time.Duration
	wall0   time.Time
	mu      sync.Mutex
	cpuMax  float64
	windows []record.HealthWindow
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
	sched := q.start
	total, steal, _ := procStat()
	for {
		select {
		case <-q.stop:
			return
		case tick := <-t.C:
			now := time.Now()
			c := processCPU()
			share := cpuShare(c-cpu, now.Sub(wall))
			hw := record.HealthWindow{Span: int64(now.Sub(wall)), CPU: share, TickLate: max(0, int64(now.Sub(tick)))}
			if !q.T0.IsZero() {
				hw.End = int64(now.Sub(q.T0))
				sc := readSched()
				counts, bounds := histDiff(sched, sc)
				hw.SchedP99, hw.SchedMax = histQuantile(counts, bounds, 0.99)*1e9, histQuantile(counts, bounds, 1)*1e9
				sched = sc
				tot, st, ok1 := procStat()
				l1, ok2 := loadAvg1()
				if ok1 && ok2 && tot > total {
					hw.HasProc, hw.Load1, hw.Steal = true, l1, float64(st-steal)/float64(tot-total)
				}
				total, steal = tot, st
			}
			q.mu.Lock()
			q.cpuMax = max(q.cpuMax, share)
			if !q.T0.IsZero() {
				q.windows = append(q.windows, hw)
			}
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
	qu := &record.Quality{CPUMean: mean, CPUMax: max(q.cpuMax, mean), Cores: runtime.GOMAXPROCS(0), Windows: q.windows}
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
