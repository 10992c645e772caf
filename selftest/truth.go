package selftest

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"servebench/load"
	"servebench/metrics"
	"servebench/record"
)

// ChildEnv is set in the environment of the simulator process that selftest starts.
// The real binary ignores it; a test binary's TestMain uses it to run Main instead of tests,
// because os.Executable is then the test binary.
const ChildEnv = "SERVEBENCH_SELFTEST_CHILD"

// simProcess is a `servebench sim` child process.
type simProcess struct {
	cmd  *exec.Cmd
	url  string
	once sync.Once
	err  error
}

var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// startSimProcess re-executes this binary as `sim` on a free loopback port with the given
// extra flags, and waits for its listening line.
func startSimProcess(ctx context.Context, flags []string) (*simProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	cmd := exec.Command(exe, append([]string{"sim", "--addr", "127.0.0.1:0", "--seed", "1"}, flags...)...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("selftest: start simulator: %w", err)
	}
	p := &simProcess{cmd: cmd}
	if p.url, err = AwaitListening(ctx, stderr); err == nil {
		return p, nil
	}
	_ = p.stop()
	return nil, fmt.Errorf("selftest: %w", err)
}

// AwaitListening reads a starting `servebench sim`'s output until its "listening on URL" line
// and returns the URL; it keeps reading r afterwards, so the child never blocks on a full pipe.
func AwaitListening(ctx context.Context, r io.Reader) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if ok {
			return u, nil
		}
		return "", errors.New("simulator exited before listening")
	case <-time.After(30 * time.Second):
		return "", errors.New("simulator did not start within 30s")
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop interrupts the simulator (it then flushes its truth log) and waits for it to exit,
// killing it after 10 s. Safe to call more than once.
func (p *simProcess) stop() error {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				p.err = fmt.Errorf("selftest: simulator: %w", err)
			}
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			p.err = fmt.Errorf("selftest: simulator did not stop; killed: %v", <-done)
		}
	})
	return p.err
}

// truth is the simulator's truth log: the write times (Unix ns) of every content event by
// request id, in event order, and when each request's first bytes were read.
type truth struct {
	events  map[string][]int64 // written_ns: right after the write and flush
	began   map[string][]int64 // write_began_ns: right before the write
	read    map[string]int64
	arrived map[string]int64 // the kernel's receive time of the request's first bytes (Linux)
}

// readTruth reads the truth log at path.
func readTruth(path string) (*truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &truth{events: make(map[string][]int64), began: make(map[string][]int64), read: make(map[string]int64),
		arrived: make(map[string]int64)}
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 1<<20))
	var ev struct {
		RequestID string `json:"request_id"`
		Written   int64  `json:"written_ns"`
		Began     int64  `json:"write_began_ns"`
		Read      int64  `json:"read_ns"`
		Arrived   int64  `json:"arrived_ns"`
		Kind      string `json:"kind"`
	}
	for sc.Scan() {
		line := sc.Bytes()
		content := strings.Contains(string(line), `"kind":"content"`)
		if !content && !strings.Contains(string(line), `"kind":"request"`) {
			continue
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("truth log %s: %w", path, err)
		}
		if content {
			out.events[ev.RequestID] = append(out.events[ev.RequestID], ev.Written)
			out.began[ev.RequestID] = append(out.began[ev.RequestID], ev.Began)
		} else {
			out.read[ev.RequestID], out.arrived[ev.RequestID] = ev.Read, ev.Arrived
			ev.Arrived = 0
		}
	}
	return out, sc.Err()
}

// rowsOf reads the records file and the truth log back and computes one row per point (run).
// Events/s count every request of the point; timestamp errors only measured ones.
func rowsOf(records, truthPath string, t0 time.Time, c *Config, itl time.Duration) ([]Point, error) {
	acc := make([]pointAcc, len(c.Points))
	err := pairRecords(records, truthPath, func(rec *record.Record, tr *truth, id string) {
		if rec.Run >= 0 && rec.Run < len(acc) {
			acc[rec.Run].add(rec, tr.events[id], tr.began[id], tr.read[id], tr.arrived[id], t0.UnixNano())
		}
	})
	if err != nil {
		return nil, err
	}
	rows := make([]Point, len(c.Points))
	for i, n := range c.Points {
		rows[i] = acc[i].row(itl, n)
	}
	return rows, nil
}

// pairRecords reads the truth log and calls pair with every record of the records file and
// its request id (load.RequestID), the key of its truth. A client event is paired with the
// truth event of the same request id and the same index among its content events (pointAcc);
// a request whose counts differ is left unpaired.
func pairRecords(records, truthPath string, pair func(*record.Record, *truth, string)) error {
	tr, err := readTruth(truthPath)
	if err != nil {
		return err
	}
	f, err := os.Open(records)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := record.NewReader(f)
	if err != nil {
		return err
	}
	var rec record.Record
	for {
		if err := rd.Read(&rec); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		pair(&rec, tr, load.RequestID(rec.Run, rec.ID))
	}
}

// Accuracy is how far a run's measured figures are from a simulator's truth, in ms: its
// measured requests paired with the truth log by request id, as the selftest pairs them.
type Accuracy struct {
	// Measured requests in the file; TTFTPaired of them paired for TTFT.
	Measured, TTFTPaired int
	// TTFT: client TTFT (first content event − sent) − the simulator's (first content event
	// written − request read). ITL: |client ITL − simulator ITL| over consecutive events.
	// Event: client arrival − simulator write, per content event.
	TTFT, ITL, Event []float64
	// Late is the client's send lateness, sent − scheduled. SendErr is how late the request
	// really was beyond that: the simulator's kernel receive time of its first bytes (its read
	// where unknown) − the client's sent stamp, so Late + SendErr is the lateness the server
	// saw.
	Late, SendErr []float64
	// Wire is the client's TTFT − the simulator's counted from the kernel's receive of the
	// request's first bytes (not its read), so the server's own delay in reading a request it
	// has received counts on both sides; ReadLag is that delay, read − kernel receive. TTFT −
	// Wire ≈ ReadLag: where TTFT's error is mostly ReadLag, the reference server was late to
	// read, and the client's stamps were not what moved.
	Wire, ReadLag []float64
}

// PairAccuracy pairs the measured requests of a records file (every run in it) with the
// truth log of the simulator that served them (`servebench sim --truth`), on the file's own
// t0 (its header's start); the slices are sorted.
func PairAccuracy(records, truthPath string) (*Accuracy, error) {
	t0, err := fileStart(records)
	if err != nil {
		return nil, err
	}
	var a pointAcc
	out := &Accuracy{}
	wall0 := t0.UnixNano()
	err = pairRecords(records, truthPath, func(rec *record.Record, tr *truth, id string) {
		if !rec.Measured() {
			return
		}
		out.Measured++
		a.add(rec, tr.events[id], tr.began[id], tr.read[id], tr.arrived[id], wall0)
		if rec.Sent == 0 {
			return
		}
		out.Late = append(out.Late, float64(rec.Sent-rec.Scheduled)/1e6)
		if at := cmp.Or(tr.arrived[id], tr.read[id]); at != 0 {
			out.SendErr = append(out.SendErr, float64(at-(wall0+rec.Sent))/1e6)
		}
		if tr.arrived[id] != 0 && tr.read[id] != 0 {
			out.ReadLag = append(out.ReadLag, float64(tr.read[id]-tr.arrived[id])/1e6)
		}
	})
	if err != nil {
		return nil, err
	}
	out.TTFTPaired = len(a.ttftErrs)
	out.TTFT, out.ITL, out.Event, out.Wire = a.ttftErrs, a.itlErrs, a.errs, a.wireErrs
	for _, xs := range [][]float64{out.TTFT, out.ITL, out.Event, out.Late, out.SendErr, out.Wire, out.ReadLag} {
		slices.Sort(xs)
	}
	return out, nil
}

// fileStart is the wall-clock t0 in a records file's header.
func fileStart(records string) (time.Time, error) {
	f, err := os.Open(records)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	rd, err := record.NewReader(f)
	if err != nil {
		return time.Time{}, err
	}
	return rd.Header().Start, nil
}

// pointAcc gathers one point's figures from its records.
type pointAcc struct {
	requests, failed, events int
	first, last              int64
	errs, ttftErrs, itlErrs  []float64 // ms
	wireErrs                 []float64 // ms
	earlyMax                 float64   // ms
}

// add counts r, and pairs a measured request with the truth: events (written, Unix ns) and
// began (when each one's write began), read, when the simulator read its first bytes, and
// arrived, when the kernel received them at the simulator (Unix ns, 0 unknown).
func (a *pointAcc) add(r *record.Record, events, began []int64, read, arrived int64, wall0 int64) {
	a.requests++
	if !r.OK() {
		a.failed++
	}
	a.events += len(r.Events)
	if a.first == 0 || r.Dispatched < a.first {
		a.first = r.Dispatched
	}
	a.last = max(a.last, r.Done)
	if !r.Measured() || len(events) != len(r.Events) || len(events) == 0 {
		return // warmup: the start of a point, all streams connecting at once, is not steady state
	}
	for i, e := range r.Events {
		a.errs = append(a.errs, float64(wall0+e.T-events[i])/1e6)
		if i < len(began) {
			a.earlyMax = max(a.earlyMax, float64(began[i]-(wall0+e.T))/1e6)
		}
		if i > 0 {
			client, server := e.T-r.Events[i-1].T, events[i]-events[i-1]
			a.itlErrs = append(a.itlErrs, math.Abs(float64(client-server))/1e6)
		}
	}
	// TTFT on each side's own clock: the client's monotonic stamps, the simulator's wall clock
	if read != 0 && r.Sent != 0 {
		client, server := r.Events[0].T-r.Sent, events[0]-read
		a.ttftErrs = append(a.ttftErrs, float64(client-server)/1e6)
		if arrived != 0 {
			a.wireErrs = append(a.wireErrs, float64(client-(events[0]-arrived))/1e6)
		}
	}
}

// maxInFlight is the largest number of spans ([dispatched, finished]) that overlap.
func maxInFlight(spans [][2]int64) int {
	type edge struct {
		t int64
		d int
	}
	es := make([]edge, 0, 2*len(spans))
	for _, s := range spans {
		es = append(es, edge{s[0], 1}, edge{s[1], -1})
	}
	slices.SortFunc(es, func(x, y edge) int {
		if x.t != y.t {
			return int(min(max(x.t-y.t, -1), 1))
		}
		return x.d - y.d // an end before a start at the same instant
	})
	n, m := 0, 0
	for _, e := range es {
		n += e.d
		m = max(m, n)
	}
	return m
}

func (a *pointAcc) row(itl time.Duration, streams int) Point {
	p := Point{ITL: itl, Streams: streams, Requests: a.requests, Failed: a.failed,
		Events: a.events, Matched: len(a.errs)}
	if a.last > a.first {
		p.Seconds = float64(a.last-a.first) / 1e9
		p.EventsPerSec = float64(a.events) / p.Seconds
	}
	p.ErrP50Ms, p.ErrP99Ms, p.ErrMaxMs = spread(a.errs)
	p.EarlyMaxMs = a.earlyMax
	p.TTFTMatched = len(a.ttftErrs)
	p.TTFTErrP50Ms, p.TTFTErrP99Ms, p.TTFTErrMaxMs = spread(a.ttftErrs)
	p.TTFTWireErrP50Ms, p.TTFTWireErrP99Ms, p.TTFTWireErrMaxMs = spread(a.wireErrs)
	_, p.ITLErrP99Ms, p.ITLErrMaxMs = spread(a.itlErrs)
	return p
}

// spread is the p50, p99 and maximum of xs (sorted in place); zeros when it is empty.
func spread(xs []float64) (p50, p99, most float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	slices.Sort(xs)
	return metrics.Quantile(xs, 50), metrics.Quantile(xs, 99), xs[len(xs)-1]
}
