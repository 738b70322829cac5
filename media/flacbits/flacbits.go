// Package flacbits holds the bit-level pieces of a FLAC frame header that both the joiner
// (media) and the test kit's hostile files (providers/testkit) write: the coded frame
// number and the two checksums. It imports nothing of the project.
package flacbits

// CodedNumber codes n the way FLAC frame headers do (UTF-8's scheme, extended to 36 bits).
func CodedNumber(n uint64) []byte {
	if n < 0x80 {
		return []byte{byte(n)}
	}
	// Bytes needed: each continuation byte holds 6 bits, the first 6-k bits for k bytes.
	k := 2
	for n >= 1<<(5*k+1) && k < 7 {
		k++
	}
	out := make([]byte, k)
	for i := k - 1; i > 0; i-- {
		out[i] = 0x80 | byte(n&0x3f)
		n >>= 6
	}
	out[0] = byte(0xff<<(8-k)) | byte(n)
	return out
}

// CRC8 is FLAC's header checksum: polynomial x^8+x^2+x+1, initial 0.
func CRC8(b []byte) byte {
	var crc byte
	for _, c := range b {
		crc ^= c
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x07
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Poly16 is FLAC's frame checksum's generator: x^16+x^15+x^2+1.
const Poly16 = 0x8005

// crc16Table is CRC16's byte-at-a-time table (most significant bit first, not reflected).
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ Poly16
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// CRC16 continues FLAC's frame checksum crc (initial 0) over b.
func CRC16(crc uint16, b []byte) uint16 {
	for _, c := range b {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
	}
	return crc
}
