package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestInputHashesWhileReading: the hash of a file read in part by a parser and then Sum'd is
// the file's sha256, as FileHash gives it, so a dataset is read once.
func TestInputHashesWhileReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.jsonl")
	var b strings.Builder
	for i := range 200 {
		b.WriteString(`{"timestamp": ` + string(rune('0'+i%10)) + `00, "input_length": 5, "output_length": 2}` + "\n")
	}
	os.WriteFile(p, []byte(b.String()), 0o644)
	in, err := OpenInput(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	buf := make([]byte, 100)
	if _, err := io.ReadFull(in, buf); err != nil {
		t.Fatal(err)
	}
	id, err := in.ID("mooncake")
	sum := sha256.Sum256([]byte(b.String()))
	want := "sha256:" + hex.EncodeToString(sum[:])
	if err != nil || id.SHA256 != want || id.File != "m.jsonl" {
		t.Errorf("ID = %+v, %v; want %s", id, err, want)
	}
	if h, _ := FileHash(p); h != want {
		t.Errorf("FileHash = %s, want %s", h, want)
	}
}

// TestInputBounded: a file past the bound fails with ErrInputTooLarge, one at it is read.
func TestInputBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, make([]byte, 1000), 0o644)
	for _, c := range []struct {
		max  int64
		fail bool
	}{{999, true}, {1000, false}, {1 << 20, false}} {
		in, err := OpenInput(context.Background(), p, c.max)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(in)
		in.Close()
		if got := errors.Is(err, ErrInputTooLarge); got != c.fail || (!c.fail && err != nil) {
			t.Errorf("max %d: %v", c.max, err)
		}
	}
	if runtime.GOOS == "linux" {
		in, _ := OpenInput(context.Background(), "/dev/zero", 1<<20)
		_, err := io.ReadAll(in)
		in.Close()
		if !errors.Is(err, ErrInputTooLarge) || !strings.Contains(err.Error(), "1MiB") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
}

// TestInputCancelUnblocksRead: a read blocked on a pipe nobody writes returns soon after the
// context ends, with an error that wraps context.Canceled.
func TestInputCancelUnblocksRead(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	path := "/proc/self/fd/" + itoa(int(r.Fd()))
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in, err := OpenInput(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(in)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("read: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the read did not return after cancel")
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "100B": 100, "8GiB": 8 << 30, "8gib": 8 << 30, "500MB": 500e6, "2K": 2048, "1TiB": 1 << 40} {
		if got, err := ParseSize(in); got != want || err != nil {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if n, _ := ParseSize(FormatSize(want)); n != want {
			t.Errorf("FormatSize(%d) = %s does not parse back", want, FormatSize(want))
		}
	}
	for _, bad := range []string{"", "0", "-1", "1.5GB", "8 parsecs", "9999999999TiB", "GiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

// TestMooncakeHugeBlockLastOnly: a block size far above the prompt's length costs what the
// prompt needs, not the whole block (--block-tokens 16000000 took 20 s and 1.1 GB for one
// 600-token prompt).
func TestMooncakeHugeBlockLastOnly(t *testing.T) {
	m := Mooncake{BlockTokens: 16_000_000}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr, err := m.Read(context.Background(), strings.NewReader(`{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [7]}`), "m", nil)
	runtime.ReadMemStats(&after)
	if err != nil || len(tr.Requests) != 1 || tr.Requests[0].InputTokens != 600 {
		t.Fatalf("Read: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("one 600-token prompt allocated %d MB", alloc>>20)
	}
	if err := (&Mooncake{BlockTokens: 1 << 40}).Validate(); err == nil {
		t.Error("a block of 2^40 tokens validated")
	}
}

// TestSharedPrefixBuildsWhatIsSent: a million groups for three requests builds three prompts
// and their three prefixes, the same as the first three of the whole workload.
func TestSharedPrefixBuildsWhatIsSent(t *testing.T) {
	var calls atomic.Int64
	tok := TokenizerFunc(func(ctx context.Context, s string) (int, error) {
		if calls.Add(1) > 10_000 {
			return 0, errors.New("too many tokenizer calls: building prompts that are never sent")
		}
		return len(strings.Fields(s)), nil
	})
	for _, order := range []Order{OrderGrouped, OrderInterleaved, OrderShuffled} {
		calls.Store(0)
		s := SharedPrefix{Groups: 1_000_000, PerGroup: 1, PrefixTokens: 10, SuffixTokens: 5, OutputTokens: 2, Seed: 3, Order: order, Count: 3}
		reqs, _, err := s.Generate(context.Background(), tok)
		if err != nil || len(reqs) != 3 {
			t.Fatalf("%s: %d requests, %v", order, len(reqs), err)
		}
		small := SharedPrefix{Groups: 4, PerGroup: 3, PrefixTokens: 10, SuffixTokens: 5, OutputTokens: 2, Seed: 3, Order: order}
		all, _, _ := small.Generate(context.Background(), tok)
		small.Count = 5
		first, _, _ := small.Generate(context.Background(), tok)
		for i := range first {
			if first[i].Prompt != all[i].Prompt || first[i].ID != i {
				t.Errorf("%s: request %d differs from the whole workload's", order, i)
			}
		}
	}
	s := SharedPrefix{Groups: 4, PerGroup: 3, PrefixTokens: 10, SuffixTokens: 5, OutputTokens: 2, Order: OrderInterleaved, Count: 4}
	reqs, _, _ := s.Generate(context.Background(), tok)
	if got := RepeatedShare(reqs, Repeats(reqs)); got != 0 { // four requests of four groups: nothing reused
		t.Errorf("repeated share %v, want 0", got)
	}
}
