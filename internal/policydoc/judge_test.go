package policydoc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"servebench/compare"
	"servebench/compare/recorded"
)

// Judge runs pairs in parallel but never two that share a stored file at once (a Side is
// not safe for concurrent use); under the race detector this test finds it if it did. Its
// verdicts are those of the pairs judged one by one, each on sides read afresh. The pairs
// are a few of the llama.cpp sets', whose files are the smallest: three pairs that share
// one base file (in two folders) and one that shares none.
func TestJudgeParallel(t *testing.T) {
	src, err := filepath.Abs(filepath.Join(root, RecordedDir))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, sub := range []string{"heldout-llama9-20261207", "heldout-llama9ub32-20261207"} {
		if err := os.Symlink(filepath.Join(src, sub), filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	f := func(sub, name string) string { return sub + "-20261207/" + name + recorded.Ext }
	m := recorded.Manifest{Sets: []recorded.Set{
		{Name: "aa", Class: recorded.AA, Runs: 3, Pairs: [][2]string{{f("heldout-llama9", "llama-1"), f("heldout-llama9", "llama-2")}, {f("heldout-llama9", "llama-3"), f("heldout-llama9", "llama-4")}}},
		{Name: "ab", Class: recorded.LlamaAB, Runs: 3, Expect: []string{"batching.max_num_seqs"}, Pairs: [][2]string{{f("heldout-llama9", "llama-1"), f("heldout-llama9", "llamab-1")}, {f("heldout-llama9", "llama-1"), f("heldout-llama9ub32", "llamab-1")}}},
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, recorded.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sets, err := LoadSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sets.Judge(compare.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	for i, set := range m.Sets {
		for j, p := range set.Pairs {
			base, err := ReadSide(dir, p[0])
			if err != nil {
				t.Fatal(err)
			}
			cand, err := ReadSide(dir, p[1])
			if err != nil {
				t.Fatal(err)
			}
			opt, err := compare.PercentOptions(5, 0, set.Expect)
			if err != nil {
				t.Fatal(err)
			}
			opt.Goodput = base.HasSLO() && cand.HasSLO()
			r := compare.Compare(base, cand, opt)
			if want := outcome(r); !reflect.DeepEqual(got[i][j], want) {
				t.Errorf("%s %d: judged in parallel %+v, alone %+v", set.Name, j+1, got[i][j], want)
			}
		}
	}
}
