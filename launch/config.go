// Package launch starts the server under test itself, one configuration at a time: a command
// template, each configuration's own flags and environment, a log file beside the records, a
// wait until the server answers, and a stop that leaves nothing behind (its own process group,
// SIGTERM, then SIGKILL after a grace). A configuration is also a condition of the runs made
// against it (Conditions), so that a comparison names the flag that differed.
package launch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"servebench/shellwords"
)

// Config is one server configuration: a name and what differs from the template.
type Config struct {
	Name string `yaml:"name" json:"name"`
	// Args are the words put in place of {args} in the template, or after it.
	Args []string `yaml:"-" json:"args,omitempty"`
	// Env are K=V settings added to the server's environment.
	Env []string `yaml:"-" json:"env,omitempty"`
}

// Placeholders of a command template.
const (
	PortWord = "{port}" // a free loopback port, chosen per start
	ArgsWord = "{args}" // the configuration's own words (else appended)
)

var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// ParseConfig reads one --server-config value, "NAME: WORDS": the words are the
// configuration's flags, and leading K=V words its environment, as a shell reads them
// ("p4: OLLAMA_NUM_PARALLEL=4", "np4: -np 4").
func ParseConfig(s string) (Config, error) {
	name, rest, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t/") {
		return Config{}, fmt.Errorf("--server-config %q: want NAME: FLAGS, e.g. \"np4: -np 4\"", s)
	}
	words, err := shellwords.Split(rest)
	if err != nil {
		return Config{}, fmt.Errorf("--server-config %q: %v", s, err)
	}
	c := Config{Name: name}
	for len(words) > 0 && envWord.MatchString(words[0]) {
		c.Env, words = append(c.Env, words[0]), words[1:]
	}
	c.Args = words
	return c, nil
}

// fileConfig is one entry of a --server-configs file: args as one string of words or a list,
// env as a map.
type fileConfig struct {
	Name string            `yaml:"name"`
	Args yaml.Node         `yaml:"args"`
	Env  map[string]string `yaml:"env"`
}

// LoadFile reads a YAML (or JSON) list of configurations, each a name, args (one string of
// words or a list) and env (a map), as docs/sweeps.md shows.
func LoadFile(path string) ([]Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--server-configs: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("--server-configs %s: %w", path, err)
	}
	var list []fileConfig
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&list); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--server-configs %s: want a list of {name, args, env}: %v", path, err)
	}
	var out []Config
	for i, fc := range list {
		c := Config{Name: strings.TrimSpace(fc.Name)}
		if c.Name == "" || strings.ContainsAny(c.Name, " \t/") {
			return nil, fmt.Errorf("--server-configs %s: entry %d: want a name without spaces or slashes", path, i+1)
		}
		switch fc.Args.Kind {
		case 0:
		case yaml.ScalarNode:
			if c.Args, err = shellwords.Split(fc.Args.Value); err != nil {
				return nil, fmt.Errorf("--server-configs %s: %s: %v", path, c.Name, err)
			}
		case yaml.SequenceNode:
			if err := fc.Args.Decode(&c.Args); err != nil {
				return nil, fmt.Errorf("--server-configs %s: %s: %v", path, c.Name, err)
			}
		default:
			return nil, fmt.Errorf("--server-configs %s: %s: args is a string or a list", path, c.Name)
		}
		for _, k := range sortedKeys(fc.Env) {
			c.Env = append(c.Env, k+"="+fc.Env[k])
		}
		out = append(out, c)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// CheckNames checks that configurations have distinct names (their files are named by them).
func CheckNames(cs []Config) error {
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Name] {
			return fmt.Errorf("two server configurations named %q: each needs its own name", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// Expand is the command line of configuration c under template: the configuration's words
// at {args}, or after the template's. The {port} placeholder stays, so that the command is
// the same condition whichever port a start is given.
func Expand(template string, c Config) (string, error) {
	tw, err := shellwords.Split(template)
	if err != nil {
		return "", fmt.Errorf("--server-cmd: %v", err)
	}
	if len(tw) == 0 {
		return "", errors.New("--server-cmd is empty")
	}
	var out []string
	placed := false
	for _, w := range tw {
		if w == ArgsWord {
			out, placed = append(out, c.Args...), true
			continue
		}
		out = append(out, w)
	}
	if !placed {
		out = append(out, c.Args...)
	}
	return shellwords.Join(out), nil
}

// Argv is the command to execute for command line cmd on port: its words, {port} replaced.
func Argv(cmd string, port int) ([]string, error) {
	w, err := shellwords.Split(cmd)
	if err != nil {
		return nil, fmt.Errorf("--server-cmd: %v", err)
	}
	if len(w) == 0 {
		return nil, errors.New("--server-cmd is empty")
	}
	for i := range w {
		w[i] = strings.ReplaceAll(w[i], PortWord, strconv.Itoa(port))
	}
	return w, nil
}
