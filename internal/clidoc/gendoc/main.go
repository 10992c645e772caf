// Command gendoc writes servebench's flag reference into docs/cli, one Markdown page per
// command, from the cobra commands. Run it from the repository root after changing a flag
// or a command's help: go run ./internal/clidoc/gendoc
package main

import (
	"fmt"
	"os"

	"servebench/internal/clidoc"
)

func main() {
	dir := clidoc.Dir
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := clidoc.Generate(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
