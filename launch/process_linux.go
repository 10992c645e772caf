package launch

import "syscall"

// sysAttr puts the server in a process group of its own, and has the kernel kill it when
// servebench itself dies without stopping it (SIGKILL from outside, a crash).
func sysAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
