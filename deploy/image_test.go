package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
)

// buildah runs buildah with its own image store in dir, so the test neither needs nor touches
// the machine's store, and with the vfs driver and chroot isolation, which work inside a
// container where overlay mounts and new namespaces may not be allowed.
type buildah struct {
	t   *testing.T
	env []string
}

func newBuildah(t *testing.T) *buildah {
	dir := t.TempDir()
	conf := filepath.Join(dir, "storage.conf")
	text := fmt.Sprintf("[storage]\ndriver = \"vfs\"\ngraphroot = %q\nrunroot = %q\n",
		filepath.Join(dir, "graph"), filepath.Join(dir, "run"))
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &buildah{t: t, env: append(os.Environ(),
		"CONTAINERS_STORAGE_CONF="+conf, "BUILDAH_ISOLATION=chroot", "BUILDER=buildah")}
	// Registered after TempDir, so it runs first: what the store holds may not be removable
	// by a plain rm (files of other uids in a rootless store).
	t.Cleanup(func() {
		_, _ = b.run("rm", "--all")
		_, _ = b.run("rmi", "--all", "--force")
	})
	return b
}

func (b *buildah) run(args ...string) (string, error) {
	cmd := exec.Command("buildah", args...)
	cmd.Env = b.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("buildah %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// probe builds and runs the smallest image like ours (scratch and a static binary), to tell
// "buildah cannot work here" (skip) from "the recipe is wrong" (fail).
func (b *buildah) probe() error {
	ctx := b.t.TempDir()
	// the image's build flags: a static binary with a version stamped in it
	build := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X servebench/internal/cli.Version="+testVersion,
		"-o", filepath.Join(ctx, "servebench"), "servebench/cmd/servebench")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.t.Fatalf("go build ./cmd/servebench, static: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ctx, "Containerfile"), []byte("FROM scratch\nCOPY servebench /servebench\n"), 0o644); err != nil {
		return err
	}
	if _, err := b.run("bud", "-f", filepath.Join(ctx, "Containerfile"), "-t", "localhost/servebench-probe", ctx); err != nil {
		return err
	}
	c, err := b.run("from", "localhost/servebench-probe")
	if err != nil {
		return err
	}
	_, err = b.run("run", "--isolation", "chroot", strings.TrimSpace(c), "--", "/servebench", "--version")
	return err
}

// TestImageBuilds builds the image with deploy/build-image.sh (a fresh static binary from this
// checkout on scratch) and runs it: the binary is there, runs as the image's non-root user,
// and can write its records to the working directory and to /tmp. The Job's image and
// command are the ones built here.
func TestImageBuilds(t *testing.T) {
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Skip("buildah is not installed (apt-get install buildah): the image recipe deploy/Containerfile is not built")
	}
	if testing.Short() {
		t.Skip("-short: not building the image")
	}
	b := newBuildah(t)
	if err := b.probe(); err != nil {
		t.Skipf("buildah cannot build and run a scratch image here, so the recipe is not tried: %v", err)
	}

	job := findJob(t, loadManifests(t)).value.(*batchv1.Job)
	c := servebenchContainer(t, job)

	// The script's default image name, which the Job names.
	script := exec.Command("bash", "build-image.sh")
	script.Env = append(b.env, "VERSION="+testVersion)
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("deploy/build-image.sh: %v\n%s", err, out)
	}
	inspect, err := b.run("inspect", "--type", "image", c.Image)
	if err != nil {
		t.Fatalf("the Job's image %q is not what deploy/build-image.sh builds: %v", c.Image, err)
	}
	var img struct {
		OCIv1 struct {
			Config struct {
				User       string
				Env        []string
				Entrypoint []string
				WorkingDir string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(inspect), &img); err != nil {
		t.Fatalf("buildah inspect: %v\n%s", err, inspect)
	}
	cfg := img.OCIv1.Config
	if cfg.User != "65532:65532" {
		t.Errorf("image user %q, want 65532:65532 (not root)", cfg.User)
	}
	if cfg.WorkingDir != c.WorkingDir {
		t.Errorf("image working directory %q, the Job's %q: a run started without the Job's workingDir would write elsewhere", cfg.WorkingDir, c.WorkingDir)
	}
	if !slices.Equal(cfg.Entrypoint, c.Command) {
		t.Errorf("image entrypoint %q, the Job's command %q", cfg.Entrypoint, c.Command)
	}
	if !slices.Contains(cfg.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("image env %q has no SSL_CERT_FILE: https:// targets would not verify", cfg.Env)
	}

	out, err := b.run("from", c.Image)
	if err != nil {
		t.Fatal(err)
	}
	ctr := strings.TrimSpace(out)
	runIn := func(args ...string) string {
		t.Helper()
		out, err := b.run(append([]string{"run", "--isolation", "chroot", ctr, "--"}, args...)...)
		if err != nil {
			t.Fatalf("in the image: %v", err)
		}
		return out
	}
	if v := runIn(c.Command[0], "--version"); !strings.Contains(v, testVersion) {
		t.Errorf("%s --version in the image: %q, want the version stamped by the build, %q", c.Command[0], v, testVersion)
	}
	// A tiny run against servebench's built-in simulator (on the loopback): the records file
	// goes to the working directory by default and must be writable by the image's user.
	small := []string{"run", "--requests", "2", "--concurrency", "1", "--warmup", "0",
		"--input-tokens", "16", "--output-tokens", "4", "-q"}
	runIn(append([]string{c.Command[0]}, small...)...)
	runIn(append([]string{c.Command[0]}, append(small, "-o", "/tmp/tmp-writable.jsonl")...)...)
	t.Logf("built %s and ran %s in it as %s: --version, a run into %s and one into /tmp", c.Image, c.Command[0], cfg.User, cfg.WorkingDir)
}
