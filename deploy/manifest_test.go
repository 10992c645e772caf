package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kinds are the API types a manifest here may hold, by "apiVersion kind". A kind not listed
// fails the test rather than going unchecked: add its type when a manifest needs it.
var kinds = map[string]func() any{
	"batch/v1 Job":             func() any { return new(batchv1.Job) },
	"batch/v1 CronJob":         func() any { return new(batchv1.CronJob) },
	"v1 Pod":                   func() any { return new(corev1.Pod) },
	"v1 PersistentVolumeClaim": func() any { return new(corev1.PersistentVolumeClaim) },
	"v1 Secret":                func() any { return new(corev1.Secret) },
	"v1 ConfigMap":             func() any { return new(corev1.ConfigMap) },
	"v1 ServiceAccount":        func() any { return new(corev1.ServiceAccount) },
	"v1 Service":               func() any { return new(corev1.Service) },
	"v1 Namespace":             func() any { return new(corev1.Namespace) },
}

// object is one decoded YAML document of a manifest file.
type object struct {
	file  string
	index int    // the document's place in its file, from 0
	raw   []byte // the document as written
	value any    // *batchv1.Job, *corev1.Pod, ...
}

// documents splits a multi-document YAML stream, leaving out documents with no content
// (only comments), as kubectl does.
func documents(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, err
		}
		if v != nil {
			docs = append(docs, doc)
		}
	}
}

// decodeStrict decodes one document into the API type its apiVersion and kind name, as the
// API server's strict field validation does: a field the type does not have, a key given
// twice, or a field name in the wrong case is an error. Otherwise a misspelt field is dropped
// (or only warned about) and the Job runs without the setting. encoding/json's
// DisallowUnknownFields alone is not enough: it matches names case-insensitively, so
// readOnlyRootFileSystem would pass for readOnlyRootFilesystem, which the server ignores.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	newValue, ok := kinds[tm.APIVersion+" "+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q kind %q: not a type this test knows (add it to kinds)", tm.APIVersion, tm.Kind)
	}
	js, err := yaml.YAMLToJSONStrict(doc) // refuses a key given twice
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	v := newValue()
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	return v, nil
}

func loadManifests(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no manifests in kubernetes/*.yaml")
	}
	var objs []object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := documents(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, doc := range docs {
			v, err := decodeStrict(doc)
			if err != nil {
				t.Errorf("%s: document %d: %v", f, i, err)
				continue
			}
			objs = append(objs, object{file: f, index: i, raw: doc, value: v})
		}
	}
	return objs
}

// TestManifestsDecodeStrictly decodes every document of kubernetes/*.yaml into its Kubernetes
// API type with unknown fields refused.
func TestManifestsDecodeStrictly(t *testing.T) {
	objs := loadManifests(t)
	if t.Failed() {
		return
	}
	for _, o := range objs {
		t.Logf("%s: document %d: %T", o.file, o.index, o.value)
	}
}

// TestManifestMisspeltFieldRefused proves the strict decoding above can fail: the Job with
// one field misspelt, at several depths, is refused with the field named.
func TestManifestMisspeltFieldRefused(t *testing.T) {
	job := findJob(t, loadManifests(t))
	for _, tc := range []struct{ field, misspelt string }{
		{"restartPolicy: Never", "restartPolicyy: Never"},                // the pod template's spec
		{"completionMode: Indexed", "completionmode: Indexed"},           // the Job's spec
		{"optional: true", "optionall: true"},                            // env[].valueFrom.secretKeyRef
		{"readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true"}, // a container's securityContext
	} {
		if !bytes.Contains(job.raw, []byte(tc.field)) {
			t.Errorf("the Job has no %q to misspell", tc.field)
			continue
		}
		bad := bytes.Replace(job.raw, []byte(tc.field), []byte(tc.misspelt), 1)
		_, err := decodeStrict(bad)
		name := strings.SplitN(tc.misspelt, ":", 2)[0]
		if err == nil || !strings.Contains(err.Error(), name+`"`) {
			t.Errorf("%s: got %v, want an unknown field %q refused", tc.misspelt, err, name)
			continue
		}
		t.Logf("%s: %v", tc.misspelt, err)
	}
	// A key given twice is refused too: with a plain decoder the last one silently wins.
	twice := bytes.Replace(job.raw, []byte("backoffLimit: 0"), []byte("backoffLimit: 0\n  backoffLimit: 6"), 1)
	if _, err := decodeStrict(twice); err == nil {
		t.Error("a key given twice was accepted")
	}
}

func findJob(t *testing.T, objs []object) object {
	t.Helper()
	var found []object
	for _, o := range objs {
		if _, ok := o.value.(*batchv1.Job); ok {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Jobs in kubernetes/*.yaml, want 1", len(found))
	}
	return found[0]
}

func servebenchContainer(t *testing.T, job *batchv1.Job) corev1.Container {
	t.Helper()
	for _, c := range job.Spec.Template.Spec.Containers {
		if c.Name == "servebench" {
			return c
		}
	}
	t.Fatal("the Job has no container named servebench")
	return corev1.Container{}
}

// TestJobReadsKeyFromSecret: the API key reaches servebench only as $OPENAI_API_KEY from a
// Secret, optional so that a server without auth needs no Secret, and is written nowhere in
// the manifest.
func TestJobReadsKeyFromSecret(t *testing.T) {
	job := findJob(t, loadManifests(t)).value.(*batchv1.Job)
	c := servebenchContainer(t, job)
	var key *corev1.EnvVar
	for i, e := range c.Env {
		if e.Name == "OPENAI_API_KEY" {
			key = &c.Env[i]
		}
		if secretish.MatchString(e.Name) && e.Value != "" {
			t.Errorf("env %s has a value in the manifest: a secret belongs in a Secret", e.Name)
		}
	}
	if key == nil {
		t.Fatal("no OPENAI_API_KEY in the servebench container's env")
	}
	ref := key.ValueFrom
	if ref == nil || ref.SecretKeyRef == nil {
		t.Fatalf("OPENAI_API_KEY is not from a secretKeyRef: %+v", key)
	}
	if ref.SecretKeyRef.Name != "servebench-api-key" || ref.SecretKeyRef.Key != "OPENAI_API_KEY" {
		t.Errorf("secretKeyRef %s/%s, want servebench-api-key/OPENAI_API_KEY (as the manifest's kubectl create secret command makes)",
			ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
	}
	if ref.SecretKeyRef.Optional == nil || !*ref.SecretKeyRef.Optional {
		t.Error("the key's secretKeyRef is not optional: a server without auth would need a Secret")
	}
	for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
		if strings.HasPrefix(a, "--api-key") {
			t.Errorf("the command line has %q: a key there is visible in the pod spec and to ps", a)
		}
	}
}

var secretish = regexp.MustCompile(`(?i)key|token|secret|password`)

// runFlags is every flag of servebench run --help, long and short names, each with whether it
// takes a value.
func runFlags(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command(binary, "run", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("servebench run --help: %v\n%s", err, out)
	}
	flags := map[string]bool{}
	re := regexp.MustCompile(`(?m)^\s+(?:-(\w), )?--([\w-]+)( \S+)?`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		takesValue := m[3] != ""
		flags[m[2]] = takesValue
		if m[1] != "" {
			flags[m[1]] = takesValue
		}
	}
	if len(flags) < 10 {
		t.Fatalf("read only %d flags from servebench run --help:\n%s", len(flags), out)
	}
	return flags
}

// TestJobCommandIsAShardedRun checks the Job's command against servebench itself: a
// `servebench run` whose flags all exist, with --shard taken from the completion index as
// README.md says, and its records file on the shared volume; then it runs that command line,
// for every index, against the simulator on 127.0.0.1 and merges the shard files.
func TestJobCommandIsAShardedRun(t *testing.T) {
	objs := loadManifests(t)
	job := findJob(t, objs).value.(*batchv1.Job)
	c := servebenchContainer(t, job)

	// one pod per shard, all at once, each knowing N
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Error("completionMode is not Indexed: the pods get no JOB_COMPLETION_INDEX")
	}
	n := int32(0)
	if job.Spec.Completions != nil {
		n = *job.Spec.Completions
	}
	if job.Spec.Parallelism == nil || *job.Spec.Parallelism != n || n < 1 {
		t.Errorf("completions %v, parallelism %v: want both N ≥ 1, so every shard runs at once", job.Spec.Completions, job.Spec.Parallelism)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["SHARDS"] != strconv.Itoa(int(n)) {
		t.Errorf("SHARDS is %q, completions %d: they must be the same N", env["SHARDS"], n)
	}

	if len(c.Command) != 1 || filepath.Base(c.Command[0]) != "servebench" {
		t.Fatalf("command %q, want servebench alone (its arguments in args)", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("args %q, want servebench run ...", c.Args)
	}

	// every flag is one servebench run has; collect the values of those that take one
	known := runFlags(t)
	values := map[string]string{}
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if !strings.HasPrefix(a, "-") {
			t.Errorf("args[%d] %q: not a flag (servebench run takes no positional arguments)", i, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := known[name]
		if !ok {
			t.Errorf("args[%d] %q: servebench run has no flag %q", i, a, name)
			continue
		}
		if takesValue && !hasValue {
			if i+1 == len(c.Args) {
				t.Errorf("args[%d] %q: no value", i, a)
				continue
			}
			i++
			value = c.Args[i]
		}
		values[name] = value
	}
	if got, want := values["shard"], "$(JOB_COMPLETION_INDEX)/$(SHARDS)"; got != want {
		t.Errorf("--shard %q, want %q", got, want)
	}
	if got, want := values["start-at"], "$(START_AT)"; got != want {
		t.Errorf("--start-at %q, want %q: every shard must begin its schedule at the same instant", got, want)
	}
	if got, want := values["url"], "$(TARGET_URL)"; got != want {
		t.Errorf("--url %q, want %q (the env's TARGET_URL)", got, want)
	}
	if _, ok := values["seed"]; !ok {
		t.Error("no --seed: every shard must build the same workload, so the seed must be fixed")
	}
	out := values["output"]
	if out == "" {
		out = values["o"]
	}
	if !strings.Contains(out, "$(JOB_COMPLETION_INDEX)") {
		t.Errorf("-o %q: the records file must be named by the completion index, or the shards overwrite each other", out)
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(c.WorkingDir, out)
	}
	onVolume := false
	for _, m := range c.VolumeMounts {
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil && strings.HasPrefix(out, m.MountPath+"/") {
				onVolume = true
			}
		}
	}
	if !onVolume {
		t.Errorf("records file %q is not on the Job's PersistentVolumeClaim: it would be lost with the pod", out)
	}
	// Every $(VAR) must be one Kubernetes can expand, or it stays as written.
	for _, a := range c.Args {
		for _, m := range regexp.MustCompile(`\$\((\w+)\)`).FindAllStringSubmatch(a, -1) {
			if _, ok := env[m[1]]; !ok && m[1] != "JOB_COMPLETION_INDEX" {
				t.Errorf("%q: $(%s) is not in the container's env", a, m[1])
			}
		}
	}
	if t.Failed() {
		return
	}

	runShards(t, c.Args, env, int(n))
}

// runShards runs the Job's command line as its N pods would, concurrently, against the
// simulator, with Kubernetes' $(VAR) expansion done here and a smaller load appended (later
// flags win), then merges the shard files with servebench report.
func runShards(t *testing.T, args []string, env map[string]string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := startSim(t, ctx)
	dir := t.TempDir() // the working directory, as the shared volume is the pods'
	// The records file is relative to workingDir: put it in dir.
	const requests = 8
	// every pod is given the same instant, a little ahead, as the README's apply command does
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		vars := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
		for k, v := range env {
			vars[k] = v
		}
		vars["TARGET_URL"] = url
		vars["START_AT"] = start // what envsubst puts there when the Job is applied
		expanded := make([]string, 0, len(args)+12)
		for _, a := range args {
			expanded = append(expanded, regexp.MustCompile(`\$\((\w+)\)`).ReplaceAllStringFunc(a, func(m string) string {
				return vars[m[2:len(m)-1]]
			}))
		}
		expanded = append(expanded, "--requests", strconv.Itoa(requests), "--rate", "1000", "--warmup", "0",
			"--output-tokens", "4", "--input-tokens", "32", "-q")
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, binary, expanded...)
			cmd.Dir = dir
			cmd.Env = withoutAPIKey(os.Environ()) // as without the optional Secret
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("servebench %s: %v\n%s", strings.Join(expanded, " "), err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != n {
		t.Fatalf("%d records files %q, want %d", len(files), files, n)
	}
	report := exec.CommandContext(ctx, binary, append([]string{"report", "--format", "json"}, files...)...)
	out, err := report.Output()
	if err != nil {
		t.Fatalf("servebench report %q: %v\n%s", files, err, out)
	}
	var summary struct {
		Completed int `json:"completed"`
	}
	if err := json.Unmarshal(out, &summary); err != nil {
		t.Fatalf("servebench report --format json: %v\n%s", err, out)
	}
	if summary.Completed != requests {
		t.Errorf("merged report: %d completed, want the whole run's %d", summary.Completed, requests)
	}
	t.Logf("%d shards of the Job's command line against %s: merged, %d of %d requests completed", n, url, summary.Completed, requests)
}

func withoutAPIKey(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") {
			out = append(out, kv)
		}
	}
	return out
}

// startSim starts servebench's simulator on a free loopback port and returns its URL.
func startSim(t *testing.T, ctx context.Context) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, "sim", "--addr", "127.0.0.1:0")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		pw.Close()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				select {
				case found <- u:
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("servebench sim did not say where it listens")
		return ""
	}
}
