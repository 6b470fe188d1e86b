package prospero

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// ARDP's sizes and defaults (the notes' section 3; include/ardp.h).
const (
	// DefaultPort is Prospero's UDP port.
	DefaultPort = 1525
	// PacketText is the most text a packet carries (ARDP_PTXT_LEN).
	PacketText = 1250
	// DefaultWindow is the packets a server sends beyond the client's
	// received-through before it asks for an acknowledgement.
	DefaultWindow = 16
)

// Header flags and options.
const (
	FlagAddress  = 0x01 // additional address information follows
	FlagPriority = 0x02 // a priority follows (2 octets)
	FlagProtocol = 0x04 // a protocol id follows (2 octets)
	FlagWindow   = 0x08 // the client's window follows (2 octets)
	FlagControl  = 0x40 // a sequenced control packet: no data
	FlagAck      = 0x80 // please acknowledge

	OptCancel         = 1 // client: cancel; server: connection refused
	OptReset          = 2 // reset received-through, even backwards
	OptBitmap         = 3
	OptRedirect       = 4 // send the rest to another server
	OptRedirectNotify = 5 // the same, and use it for later requests
	OptQueueStatus    = 254
)

// Header is an ARDP header. A field the header leaves out has its
// default (protocol.tex 2136-2150): Has says which fields were present.
type Header struct {
	Len    int    // octets, octet 0 included
	ConnID uint16 // 0 when absent
	// Seq is the packet number: 1 when absent (the message then has one
	// packet), 0 for an unsequenced control packet (an ACK).
	Seq uint16
	// Total is the message's packets: 0 when not known yet (or absent).
	Total uint16
	// Rcvd is the received-through of the other direction's message;
	// HasRcvd says it was present.
	Rcvd    uint16
	HasRcvd bool
	// Wait is the seconds to wait before retrying; HasWait says it was
	// present.
	Wait    uint16
	HasWait bool
	Flags   byte
	Option  byte
	// Window is the window the client asks for (FlagWindow); Priority
	// the priority (FlagPriority).
	Window   uint16
	Priority int16
	// Redirect is the server named by an option 4 or 5.
	Redirect netip.AddrPort
}

// ErrHeader is a datagram whose ARDP header cannot be read.
var ErrHeader = errors.New("not an ARDP header")

// ParseHeader reads the header at the start of a datagram and returns it
// with the packet's text.
func ParseHeader(b []byte) (Header, []byte, error) {
	var h Header
	if len(b) == 0 {
		return h, nil, fmt.Errorf("%w: an empty datagram", ErrHeader)
	}
	if b[0]>>6 != 0 {
		return h, nil, fmt.Errorf("%w: version %d (only 0 exists)", ErrHeader, b[0]>>6)
	}
	n := int(b[0] & 0x3f)
	if n == 0 || n > len(b) {
		return h, nil, fmt.Errorf("%w: a header of %d octets in a datagram of %d", ErrHeader, n, len(b))
	}
	h.Len, h.Seq = n, 1
	hd := b[:n]
	u16 := func(i int) uint16 { return binary.BigEndian.Uint16(hd[i:]) }
	if n >= 3 {
		h.ConnID = u16(1)
	}
	if n >= 5 {
		h.Seq = u16(3)
	}
	if n >= 7 {
		h.Total = u16(5)
	} else if n < 5 {
		h.Total = 1 // no packet number: the only packet
	}
	if n >= 9 {
		h.Rcvd, h.HasRcvd = u16(7), true
	}
	if n >= 11 {
		h.Wait, h.HasWait = u16(9), true
	}
	if n >= 12 {
		h.Flags = hd[11]
	}
	if n >= 13 {
		h.Option = hd[12]
	}
	if n == 2 || n == 4 || n == 6 || n == 8 || n == 10 {
		return h, nil, fmt.Errorf("%w: a header of %d octets ends inside a field", ErrHeader, n)
	}
	rest := hd[min(n, 13):]
	take := func(k int, what string) ([]byte, error) {
		if len(rest) < k {
			return nil, fmt.Errorf("%w: the header ends before its %s", ErrHeader, what)
		}
		v := rest[:k]
		rest = rest[k:]
		return v, nil
	}
	if h.Flags&FlagAddress != 0 {
		t, err := take(2, "address information")
		if err != nil {
			return h, nil, err
		}
		if _, err := take(int(t[1]), "address information"); err != nil {
			return h, nil, err
		}
	}
	if h.Flags&FlagPriority != 0 {
		v, err := take(2, "priority")
		if err != nil {
			return h, nil, err
		}
		h.Priority = int16(binary.BigEndian.Uint16(v))
	}
	if h.Flags&FlagProtocol != 0 {
		if _, err := take(2, "protocol id"); err != nil {
			return h, nil, err
		}
	}
	if h.Flags&FlagWindow != 0 {
		v, err := take(2, "window")
		if err != nil {
			return h, nil, err
		}
		h.Window = binary.BigEndian.Uint16(v)
	}
	switch h.Option {
	case OptRedirect, OptRedirectNotify:
		v, err := take(6, "redirect address")
		if err != nil {
			return h, nil, err
		}
		h.Redirect = netip.AddrPortFrom(netip.AddrFrom4([4]byte(v[:4])), binary.BigEndian.Uint16(v[4:]))
	}
	return h, b[n:], nil
}

// Append writes h in its shortest form that holds every field set
// (Len, when larger, asks for at least that many octets) after b.
func (h Header) Append(b []byte) []byte {
	var ext []byte
	if h.Flags&FlagPriority != 0 {
		ext = binary.BigEndian.AppendUint16(ext, uint16(h.Priority))
	}
	if h.Flags&FlagWindow != 0 {
		ext = binary.BigEndian.AppendUint16(ext, h.Window)
	}
	if h.Option == OptRedirect || h.Option == OptRedirectNotify {
		a := h.Redirect.Addr().As4()
		ext = append(ext, a[:]...)
		ext = binary.BigEndian.AppendUint16(ext, h.Redirect.Port())
	}
	n := 1
	switch {
	case h.Option != 0 || len(ext) > 0:
		n = 13
	case h.Flags != 0:
		n = 12
	case h.HasWait:
		n = 11
	case h.HasRcvd:
		n = 9
	case h.Total != 0:
		n = 7
	case h.Seq != 1:
		n = 5
	case h.ConnID != 0:
		n = 3
	}
	if h.Len > n && len(ext) == 0 {
		n = min(h.Len, 13)
	}
	if n == 2 || n == 4 || n == 6 || n == 8 || n == 10 {
		n++
	}
	b = append(b, byte(n+len(ext)))
	put := func(v uint16) { b = binary.BigEndian.AppendUint16(b, v) }
	if n >= 3 {
		put(h.ConnID)
	}
	if n >= 5 {
		put(h.Seq)
	}
	if n >= 7 {
		put(h.Total)
	}
	if n >= 9 {
		put(h.Rcvd)
	}
	if n >= 11 {
		put(h.Wait)
	}
	if n >= 12 {
		b = append(b, h.Flags)
	}
	if n >= 13 {
		b = append(b, h.Option)
	}
	b = append(b, ext...)
	return b
}

// swap16 is v with its two octets swapped: the connection id as a
// little-endian build of the reference server writes it in the packets
// it sends again (the notes' 8.3).
func swap16(v uint16) uint16 { return v<<8 | v>>8 }
