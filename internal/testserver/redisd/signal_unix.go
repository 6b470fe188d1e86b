//go:build unix

package redisd

import "syscall"

// Pause stops the store's process (SIGSTOP): the kernel still takes
// connections and requests, answered after Resume.
func (s *Server) Pause() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Resume continues a paused store (SIGCONT).
func (s *Server) Resume() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGCONT)
	}
}
