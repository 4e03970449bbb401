//go:build !linux

package testenv

import "syscall"

// sysProcAttr has no portable equivalent of Linux's Pdeathsig: elsewhere, a test
// binary that dies without calling Stop can leave its processes running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
