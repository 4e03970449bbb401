package testenv

import "syscall"

// sysProcAttr makes the kernel SIGKILL a child when the thread that started it
// exits, so no etcd or apiserver outlives a test binary that dies without calling
// Stop (a panic, `go test -timeout`, SIGKILL). Go's runtime only ends a thread when
// a goroutine exits while locked to it with runtime.LockOSThread; Start never
// locks, so in practice this fires when the test binary exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
