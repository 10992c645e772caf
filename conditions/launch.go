package conditions

import (
	"fmt"
	"strings"

	"servebench/shellwords"
)

// Keys of a server that servebench started itself (run or sweep --server-cmd).
const (
	// LaunchCommand is the server's whole command line, {port} unexpanded.
	LaunchCommand = "launch.command"
	// LaunchFlagPrefix starts the key of each flag of that command line, e.g. launch.flag.np.
	LaunchFlagPrefix = "launch.flag."
	// LaunchEnvPrefix starts the key of each environment setting given with --server-env.
	LaunchEnvPrefix = "launch.env."
	// LaunchProgram is the command's first word; LaunchArgPrefix starts the key of each word
	// that belongs to no flag (a subcommand, a model path), numbered from 1.
	LaunchProgram   = "launch.program"
	LaunchArgPrefix = "launch.arg."
)

// launchConditions are the conditions of the server command recorded in a header's config:
// the command, its program, each of its flags by name, its other words and each environment
// setting, so that compare of two configurations names the flag that differs rather than a
// long command line. The command line itself is information only (Blocking): every part of
// it is a condition of its own, which decides.
func launchConditions(f *facts, c map[string]any) {
	cmd, _ := c["server_cmd"].(string)
	if cmd == "" {
		return
	}
	f.put(LaunchCommand, cmd)
	words, err := shellwords.Split(cmd)
	if err == nil && len(words) > 0 {
		f.put(LaunchProgram, words[0])
		flags, args := Flags(words[1:])
		for _, kv := range flags {
			f.put(LaunchFlagPrefix+kv[0], kv[1])
		}
		for i, a := range args {
			f.put(fmt.Sprintf("%s%d", LaunchArgPrefix, i+1), a)
		}
	}
	env, _ := c["server_env"].([]any)
	for _, e := range env {
		if s, _ := e.(string); strings.Contains(s, "=") {
			k, v, _ := strings.Cut(s, "=")
			f.put(LaunchEnvPrefix+k, v)
		}
	}
}

// Flags reads the flags of a command's arguments as name and value pairs, in order: "-np 4"
// and "--np=4" are np 4; a flag followed by another flag, or last, is "true"; a repeated
// flag's values are joined with commas. The words that belong to no flag (a subcommand, a
// model path) are returned apart, in order.
func Flags(args []string) (flags [][2]string, rest []string) {
	var out [][2]string
	at := map[string]int{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !isFlag(a) {
			rest = append(rest, a)
			continue
		}
		name, val, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			val = "true"
			if i+1 < len(args) && !isFlag(args[i+1]) {
				val = args[i+1]
				i++
			}
		}
		if j, seen := at[name]; seen {
			out[j][1] += "," + val
			continue
		}
		at[name] = len(out)
		out = append(out, [2]string{name, val})
	}
	return out, rest
}

// isFlag: a word starting with a dash that is not a negative number ("-1" is a value).
func isFlag(w string) bool {
	if len(w) < 2 || w[0] != '-' || w == "--" {
		return false
	}
	c := strings.TrimLeft(w, "-")
	return c != "" && !(c[0] >= '0' && c[0] <= '9' || c[0] == '.')
}
