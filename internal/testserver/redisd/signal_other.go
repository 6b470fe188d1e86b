//go:build !unix

package redisd

// Pause would stop the store's process; without SIGSTOP the test is
// skipped.
func (s *Server) Pause() { s.t.Skip("SIGSTOP is a Unix signal") }

// Resume would continue a paused store.
func (s *Server) Resume() {}
