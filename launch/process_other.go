//go:build !linux

package launch

import "syscall"

// sysAttr puts the server in a process group of its own.
func sysAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
