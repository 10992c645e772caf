// Command pack stores a folder that `scripts/validate-compare gen` wrote as recorded sets
// (package recorded): each records file compacted and compressed into OUT/SUB, and the sets
// added to OUT's manifest, with the load averages of the folder's load.log. Before a file is
// kept, every pair's verdict is judged from the original and the stored file and must agree
// (the stored events are rounded to 10 µs).
//
//	go run ./compare/recorded/pack -from DIR -sub design-20261207 -label design \
//	    -commit $(git rev-parse --short HEAD) -recorded "2026-12-07 03:24–03:50" \
//	    -command 'PORT=24000 STAGES=aa3 PAIRS3=10 scripts/validate-compare gen DIR servebench; …' \
//	    -pairs3 10 -pairs1 10 -ab 10 -ab2 5 -drift 6 -suffix ""
//
// The llama.cpp stages' files (llama-aa3, llama-ab) are stored with -llama, -llama-ab and
// -llama-expect (the condition the candidate's server flags change, e.g. batching.max_num_seqs).
//
// With -convert DIR it rewrites every stored file under DIR as pack stores a file now, in
// format 3 (NAME.rec.xz, package recorded): one of format 1 (NAME.jsonl.gz: the gzipped
// records files, compact or not) or of format 2 (NAME.rec.xz, events to the µs) packed anew,
// and the pairs of DIR's manifest with them, if it has one of this package's; one of format 3
// compressed again:
//
//	go run ./compare/recorded/pack -convert compare/testdata/recorded
//	go run ./compare/recorded/pack -convert metrics/testdata/recorded
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"servebench/compare"
	"servebench/compare/recorded"
	"servebench/internal/policydoc"
	"servebench/record"
)

func main() {
	from := flag.String("from", "", "the folder validate-compare gen wrote")
	out := flag.String("out", "compare/testdata/recorded", "the stored sets' folder")
	sub := flag.String("sub", "", "subfolder of -out for these files")
	label := flag.String("label", recorded.Design, "design, held-out or held-out earlier")
	commit := flag.String("commit", "", "servebench commit that recorded them")
	when := flag.String("recorded", "", "when (UTC)")
	command := flag.String("command", "", "the commands that recorded them")
	suffix := flag.String("suffix", "", "appended to each set's name")
	pairs3 := flag.Int("pairs3", 0, "A/A pairs at 3 runs (PAIRS3)")
	pairs1 := flag.Int("pairs1", 0, "A/A pairs at 1 run (PAIRS1)")
	ab := flag.Int("ab", 0, "A/B +10% pairs (AB)")
	ab2 := flag.Int("ab2", 0, "A/B ×2 pairs (AB2)")
	drift := flag.Int("drift", 0, "pairs of each changing shape (DRIFT)")
	llama := flag.Int("llama", 0, "llama.cpp A/A pairs at 3 runs (LLAMA)")
	llamaAB := flag.Int("llama-ab", 0, "llama.cpp A/B pairs at 3 runs (LLAMA_AB)")
	llamaExpect := flag.String("llama-expect", "", "comma-separated conditions the llama.cpp A/B pairs are compared with (--expect-change): what LLAMA_CAND changes")
	convert := flag.String("convert", "", "rewrite the stored files under this folder in format 3")
	flag.Parse()
	if *convert != "" {
		if err := convertDir(*convert); err != nil {
			fmt.Fprintln(os.Stderr, "pack:", err)
			os.Exit(1)
		}
		return
	}
	var le []string
	if *llamaExpect != "" {
		le = strings.Split(*llamaExpect, ",")
	}
	counts := counts{pairs3: *pairs3, pairs1: *pairs1, ab: *ab, ab2: *ab2, drift: *drift, llama: *llama, llamaAB: *llamaAB, llamaExpect: le}
	if err := run(*from, *out, *sub, *label, *commit, *when, *command, *suffix, counts); err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
}

// counts are the pairs of each set validate-compare gen made (its environment's figures).
type counts struct {
	pairs3, pairs1, ab, ab2, drift int
	llama, llamaAB                 int
	llamaExpect                    []string
}

func run(from, out, sub, label, commit, when, command, suffix string, n counts) error {
	if from == "" || sub == "" {
		return fmt.Errorf("-from and -sub are required")
	}
	loads, err := readLoads(filepath.Join(from, "load.log"))
	if err != nil {
		return err
	}
	f := func(set string, i int) string { return fmt.Sprintf("%s-%d.jsonl", set, i) }
	type layout struct {
		name, class string
		runs        int
		pairs       [][2]string
		expect      []string
	}
	var sets []layout
	add := func(name, class string, runs, n int, pair func(i int) [2]string, expect ...string) {
		if n == 0 {
			return
		}
		l := layout{name: name + suffix, class: class, runs: runs, expect: expect}
		for i := 1; i <= n; i++ {
			l.pairs = append(l.pairs, pair(i))
		}
		sets = append(sets, l)
	}
	add("aa3", recorded.AA, 3, n.pairs3, func(i int) [2]string { return [2]string{f("aa3", 2*i-1), f("aa3", 2*i)} })
	add("aa1", recorded.AA, 1, n.pairs1, func(i int) [2]string { return [2]string{f("aa1", 2*i-1), f("aa1", 2*i)} })
	add("ab10", recorded.AB10, 3, n.ab, func(i int) [2]string { return [2]string{f("aa3", i), f("ab", i)} }, "sim")
	add("ab2x", recorded.AB2x, 3, n.ab2, func(i int) [2]string { return [2]string{f("aa3", i+n.ab), f("ab2", i)} }, "sim")
	for _, d := range []struct{ name, class string }{{"throttle", recorded.Throttle}, {"cold", recorded.Cold}, {"overload", recorded.Overload}} {
		expect := []string{"sim"}
		if d.name == "overload" { // the base's server is a B200 (validate-compare)
			expect = append(expect, "gpu", "server.flag.hardware", "batching.kv_cache_tokens")
		}
		add(d.name, d.class, 1, n.drift, func(i int) [2]string { return [2]string{f(d.name, 2*i-1), f(d.name, 2*i)} }, expect...)
	}
	add("llama-aa3", recorded.AA, 3, n.llama, func(i int) [2]string { return [2]string{f("llama", 2*i-1), f("llama", 2*i)} })
	add("llama-ab", recorded.LlamaAB, 3, n.llamaAB, func(i int) [2]string { return [2]string{f("llama", i), f("llamab", i)} }, n.llamaExpect...)
	dir := filepath.Join(out, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	m, err := recorded.ReadManifest(out)
	if os.IsNotExist(err) {
		m, err = &recorded.Manifest{}, nil
	}
	if err != nil {
		return err
	}
	stored := map[string]bool{}
	for _, l := range sets {
		if _, err := os.Stat(filepath.Join(from, l.pairs[0][1])); err != nil {
			fmt.Printf("%s: not recorded, left out\n", l.name)
			continue
		}
		s := recorded.Set{Name: l.name, Class: l.class, Runs: l.runs, Label: label, Recorded: when, Commit: commit, Command: command, Expect: l.expect}
		lo, hi := 1e9, 0.0
		for _, p := range l.pairs {
			var sp [2]string
			for k, name := range p {
				if !stored[name] {
					if err := store(filepath.Join(from, name), filepath.Join(dir, storedName(name))); err != nil {
						return err
					}
					stored[name] = true
				}
				sp[k] = filepath.Join(sub, storedName(name))
				for _, v := range loads[name] {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
			if err := same(filepath.Join(from, p[0]), filepath.Join(from, p[1]), filepath.Join(dir, storedName(p[0])), filepath.Join(dir, storedName(p[1])), l.expect); err != nil {
				return fmt.Errorf("%s %v: %w", l.name, p, err)
			}
			s.Pairs = append(s.Pairs, sp)
		}
		if hi > 0 {
			s.Load = fmt.Sprintf("%.1f to %.1f", lo, hi)
		}
		m.Sets = append(m.Sets, s)
		fmt.Printf("%s: %d pairs, load %s\n", s.Name, len(s.Pairs), s.Load)
	}
	return writeManifest(out, m)
}

// readLoads reads load.log: a file's name and the load average before and after it.
func readLoads(path string) (map[string][]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string][]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		for _, s := range f[1:3] {
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				out[f[0]] = append(out[f[0]], v)
			}
		}
	}
	return out, nil
}

// storedName is the stored file's name of a records file NAME.jsonl: NAME.rec.xz.
func storedName(name string) string { return strings.TrimSuffix(name, ".jsonl") + recorded.Ext }

func store(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	var buf bytes.Buffer
	if err := recorded.Pack(&buf, in); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.WriteFile(dst, buf.Bytes(), 0o644)
}

// storedExt is the name with the extension of format 2 and after of a stored file's name.
func storedExt(name string) string {
	if base, ok := strings.CutSuffix(name, ".jsonl.gz"); ok {
		return base + recorded.Ext
	}
	return name
}

// convertDir rewrites the stored files under dir in format 3, and dir's manifest's pairs
// with them.
func convertDir(dir string) error {
	var old []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".jsonl.gz") || strings.HasSuffix(p, recorded.Ext)) {
			old = append(old, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	before, after := int64(0), int64(0)
	for _, p := range old {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if strings.HasSuffix(p, recorded.Ext) {
			err = recorded.Repack(&buf, f)
		} else {
			var raw []byte
			if raw, err = recorded.Expand(f); err == nil {
				err = recorded.Pack(&buf, bytes.NewReader(raw))
			}
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		dst := storedExt(p)
		if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
			return err
		}
		before, after = before+fi.Size(), after+int64(buf.Len())
		if dst != p {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%d files: %.1f MB before, %.1f MB in format 3\n", len(old), float64(before)/1e6, float64(after)/1e6)
	m, err := recorded.ReadManifest(dir)
	if err != nil || len(m.Sets) == 0 { // none, or another package's (metrics' sets are found by name)
		return nil
	}
	for i := range m.Sets {
		for j := range m.Sets[i].Pairs {
			for k, name := range m.Sets[i].Pairs[j] {
				m.Sets[i].Pairs[j][k] = storedExt(name)
			}
		}
	}
	return writeManifest(dir, m)
}

// same judges the pair from the originals and from the stored files and fails when the
// verdict, a row's change or the provisional reasons differ.
func same(b0, c0, b1, c1 string, expect []string) error {
	opt, err := compare.PercentOptions(5, 0, expect)
	if err != nil {
		return err
	}
	judge := func(b, c string, stored bool) (*compare.Result, error) {
		var sides [2]*compare.Side
		for k, p := range []string{b, c} {
			var s *compare.Side
			var err error
			if stored {
				s, err = policydoc.ReadSide(filepath.Dir(p), filepath.Base(p))
			} else {
				s, err = compare.ReadSide(p, func(string, *record.LineError) {})
			}
			if err != nil {
				return nil, err
			}
			sides[k] = s
		}
		o := opt
		o.Goodput = sides[0].HasSLO() && sides[1].HasSLO()
		return compare.Compare(sides[0], sides[1], o), nil
	}
	r0, err := judge(b0, c0, false)
	if err != nil {
		return err
	}
	r1, err := judge(b1, c1, true)
	if err != nil {
		return err
	}
	key := func(r *compare.Result) []string {
		k := []string{r.Verdict, strings.Join(r.Provisional, "; ")}
		for _, row := range r.Rows {
			k = append(k, row.Metric.Name+" "+row.Change)
		}
		return k
	}
	if !reflect.DeepEqual(key(r0), key(r1)) {
		return fmt.Errorf("stored files judge otherwise: %q against %q", key(r1), key(r0))
	}
	return nil
}

func writeManifest(dir string, m *recorded.Manifest) error {
	b, err := jsonIndent(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, recorded.ManifestName), b, 0o644)
}

func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "\t")
	return append(b, '\n'), err
}
