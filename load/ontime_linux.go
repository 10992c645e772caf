package load

import (
	"syscall"
	"time"
)

// sleepFine sleeps d in one nanosleep. It first sets the thread's timer slack to 1 µs: the
// kernel's default, 50 µs, lets it end a sleep that much late to batch wake-ups. The slack
// stays set on the thread, which Go reuses for other goroutines; a smaller slack only ends
// that thread's timed waits nearer their deadlines.
func sleepFine(d time.Duration) {
	_, _, _ = syscall.Syscall(syscall.SYS_PRCTL, prSetTimerSlack, uintptr(time.Microsecond), 0)
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // interrupted: waitUntil sleeps what is left
}

// prSetTimerSlack is PR_SET_TIMERSLACK (linux/prctl.h).
const prSetTimerSlack = 29
