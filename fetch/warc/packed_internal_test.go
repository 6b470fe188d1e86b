package warc

import (
	"hash/crc32"
	"testing"
)

// The CRC-32 of two pieces combined is the CRC-32 of the two together,
// wherever the cut and whatever the lengths.
func FuzzCRC32Combine(f *testing.F) {
	f.Add([]byte("WARC/1.1\r\n"), []byte("a block"))
	f.Add([]byte{}, []byte("x"))
	f.Add([]byte("x"), []byte{})
	f.Add(make([]byte, 3), make([]byte, 70000))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)))
		if want := crc32.ChecksumIEEE(append(append([]byte(nil), a...), b...)); got != want {
			t.Fatalf("combined %08x, want %08x (%d + %d bytes)", got, want, len(a), len(b))
		}
	})
}
