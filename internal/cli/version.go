package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
)

// Version is servebench's version, set at build time with -ldflags "-X servebench/internal/cli.Version=...".
var Version = "0.1.0-dev"

// newVersionCmd is `servebench version`.
func newVersionCmd(std *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print servebench's version, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(std.stdout, "servebench %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// versionFlag defines --version without cobra's -v, which most tools read as verbose.
func versionFlag(root *cobra.Command) {
	root.Flags().Bool("version", false, "print the version ("+strings.TrimSpace("servebench version")+" says more)")
}
