package peertest

import "syscall"

// dieWithParent makes the kernel kill a started server when the test process dies, so a test
// binary killed by its timeout leaves no server behind on its port.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
