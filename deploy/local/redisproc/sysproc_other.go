//go:build !linux

package redisproc

import "syscall"

// sysProcAttr returns nil: parent-death signals exist only on Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}
