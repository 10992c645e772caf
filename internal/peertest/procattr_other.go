//go:build !linux

package peertest

import "syscall"

// dieWithParent has no portable counterpart outside Linux: a server is stopped by its
// test's cleanup (or StopShared) only.
func dieWithParent() *syscall.SysProcAttr { return nil }
