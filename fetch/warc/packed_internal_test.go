package warc

import (
	"bytes"
	"crypto/sha1"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
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

// crc32Combine agrees with zlib's older crc32_combine, which squares
// the operator of one zero bit instead, on lengths up to terabytes,
// where no test can checksum the bytes themselves.
func TestCRC32CombineLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		crc1, crc2 := rng.Uint32(), rng.Uint32()
		n := rng.Int64N(1 << (1 + i%44))
		if got, want := crc32Combine(crc1, crc2, n), crc32CombineGF2(crc1, crc2, n); got != want {
			t.Fatalf("crc32Combine(%08x, %08x, %d) = %08x, the matrix way %08x", crc1, crc2, n, got, want)
		}
	}
}

func crc32CombineGF2(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1
	}
	var even, odd [32]uint32
	odd[0] = crc32.IEEE // the operator of one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		gf2Square(&even, &odd) // one zero byte, the first time
		if len2&1 != 0 {
			crc1 = gf2Times(&even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		gf2Square(&odd, &even)
		if len2&1 != 0 {
			crc1 = gf2Times(&odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range mat {
		square[n] = gf2Times(mat, mat[n])
	}
}

func BenchmarkCRC32Combine(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		crc32Combine(uint32(i), 0x12345678, 100<<10+int64(i&1023))
	}
}

// BenchmarkRecordWork measures, per byte of a block, the work that no
// way of writing an archive can leave out: the two SHA-1 digests of an
// HTTP response's record (its block's and its payload's) and the block's
// compression at BestSpeed, in pieces as packedBlock compresses them, on
// one processor each. Against a transfer at memory speed, they are what
// an archive must cost (see the Performance notes in internal/devcmd/sidebyside's doc).
func BenchmarkRecordWork(b *testing.B) {
	text := packageText(b, 8<<20)
	b.Run("digests", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			block, payload := sha1.New(), sha1.New()
			block.Write(text)
			payload.Write(text)
			block.Sum(nil)
			payload.Sum(nil)
		}
	})
	b.Run("deflate", func(b *testing.B) {
		fw := flaters.Get().(*flate.Writer)
		defer flaters.Put(fw)
		var out bytes.Buffer
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			out.Reset()
			for p := 0; p < len(text); p += pieceSize {
				fw.Reset(&out)
				fw.Write(text[p:min(p+pieceSize, len(text))])
				fw.Flush()
			}
		}
		b.ReportMetric(float64(out.Len())/float64(len(text)), "out/in")
	})
}

// packageText is n bytes of text: this package's source files, again and
// again (each round farther apart than deflate's window looks).
func packageText(b *testing.B, n int) []byte {
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		b.Fatalf("no source files: %v", err)
	}
	var all []byte
	for len(all) < n {
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			all = append(all, data...)
		}
	}
	return all[:n]
}

// loadIndex takes any file without panicking, and what it keeps of a
// line is a payload digest with the URL and time of its record.
func FuzzLoadIndex(f *testing.F) {
	f.Add([]byte(" CDX a b a m s k r M V g u\nhttp://h/ 20261120081500 http://h/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 0 w.warc.gz <urn:uuid:1>\n"))
	f.Add([]byte("org,example)/ 20261120081500 {\"url\": \"http://example.org/\", \"digest\": \"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\"}\n"))
	f.Add([]byte(" CDX k a\n- -\nX\n"))
	f.Add([]byte("CDX u b a k\n<> 2026 x y\n"))
	f.Add([]byte("x 20261120081500 {\"url\": \"u\", \"digest\": \"sha1:\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		w := &Writer{seen: map[string]revisitRef{}}
		if w.loadIndex(path) != nil {
			return
		}
		for d, ref := range w.seen {
			if !strings.HasPrefix(d, "sha1:") || len(d) == len("sha1:") || ref.uri == "" || ref.date == "" {
				t.Fatalf("kept %q: %+v", d, ref)
			}
		}
	})
}
