package media

// crcTable is the byte-at-a-time table of a bits-wide, most-significant-bit-first (not
// reflected) CRC with the generator poly, as Ogg's CRC-32 uses.
func crcTable[T uint16 | uint32](poly T, bits int) (t [256]T) {
	top := T(1) << (bits - 1)
	for i := range t {
		crc := T(i) << (bits - 8)
		for range 8 {
			if crc&top != 0 {
				crc = crc<<1 ^ poly
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}
