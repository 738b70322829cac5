package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"parla/media/flacbits"
)

// FLAC joining, without decoding: the frames of several FLAC files of the same layout are
// copied, in order, under one STREAMINFO that counts them all.
//
// A FLAC encoder numbers the frames of a fixed-blocksize stream from 0 and lets only the
// last one be shorter. Parts joined as they are would restart the numbering at every seam
// (ffmpeg's decoder then sees timestamps run backwards) and put short frames in the middle.
// So every frame is rewritten as a variable-blocksize frame that carries the number of its
// first sample instead, with both checksums recomputed; the subframes (the audio) are
// copied untouched. STREAMINFO gets the total sample count and the frame and block size
// bounds; its MD5 of the decoded audio is left zero, which the format defines as "not
// computed" (computing it would mean decoding everything once more).

// flacInfo is what a part's STREAMINFO says about its layout and length.
type flacInfo struct {
	minBlock, maxBlock   int
	rate, channels, bits int
	samples              uint64
}

// flacFrame is one frame found in a part: where it is and how its header is laid out.
type flacFrame struct {
	start, end int // data[start:end] is the frame, its CRC-16 included
	numAt      int // offset of the coded frame/sample number from start
	numLen     int // length of that number
	hdrLen     int // header length, CRC-8 included
	block      int // samples in the frame
}

// joinFLAC writes the FLAC files at paths, in order, to w as one FLAC stream: "fLaC", one
// STREAMINFO made from the parts' own, then every part's frames renumbered. It reads the
// parts' headers first, then each part once, one at a time. The frame sizes in STREAMINFO
// are left 0 ("unknown"), as the format allows.
func joinFLAC(w io.Writer, paths []string) error {
	info, infos, err := joinedFLACInfo(paths)
	if err != nil {
		return err
	}
	if err := writeFLACHead(w, info); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var sample uint64
	hdr := make([]byte, 0, 32)
	var crc [2]byte
	for i, path := range paths {
		if infos[i].samples == 0 {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, at, err := parseFLACHeader(data)
		if err != nil {
			return fmt.Errorf("part %d: %w", i+1, err)
		}
		frames, err := flacFrames(data, at)
		if err != nil {
			return fmt.Errorf("part %d: %w", i+1, err)
		}
		var samples uint64
		for _, f := range frames {
			samples += uint64(f.block)
		}
		if samples != infos[i].samples {
			return fmt.Errorf("part %d: FLAC frames hold %d samples, STREAMINFO says %d", i+1, samples, infos[i].samples)
		}
		for _, f := range frames {
			frame := data[f.start:f.end]
			hdr = hdr[:0]
			hdr = append(hdr, frame[0], frame[1]|0x01) // blocking strategy: variable
			hdr = append(hdr, frame[2:f.numAt]...)
			hdr = append(hdr, flacbits.CodedNumber(sample)...)
			hdr = append(hdr, frame[f.numAt+f.numLen:f.hdrLen-1]...) // explicit block size or rate
			hdr = append(hdr, flacbits.CRC8(hdr))
			body := frame[f.hdrLen : len(frame)-2] // the subframes, untouched
			old := binary.BigEndian.Uint16(frame[len(frame)-2:])
			binary.BigEndian.PutUint16(crc[:], crc16Replace(old, frame[:f.hdrLen], hdr, len(body)))
			bw.Write(hdr)
			bw.Write(body)
			if _, err := bw.Write(crc[:]); err != nil {
				return err
			}
			sample += uint64(f.block)
		}
	}
	return bw.Flush()
}

// joinedFLACInfo reads the STREAMINFO of every part and makes the joined stream's: one
// format, the sum of the samples, block sizes that hold for every frame.
func joinedFLACInfo(paths []string) (flacInfo, []flacInfo, error) {
	var info flacInfo
	infos := make([]flacInfo, len(paths))
	for i, path := range paths {
		part, err := readFLACInfo(path)
		if err != nil {
			return info, nil, fmt.Errorf("part %d: %w", i+1, err)
		}
		if i > 0 && (part.rate != info.rate || part.channels != info.channels || part.bits != info.bits) {
			return info, nil, fmt.Errorf("part %d: FLAC of %d Hz, %d channels, %d bits after parts of %d Hz, %d channels, %d bits",
				i+1, part.rate, part.channels, part.bits, info.rate, info.channels, info.bits)
		}
		if part.maxBlock == 0 {
			return info, nil, fmt.Errorf("part %d: FLAC without block sizes in STREAMINFO", i+1)
		}
		if i == 0 {
			info = part
			info.samples = 0
		}
		infos[i] = part
		if part.samples == 0 { // no audio at all (a chunk of text that is only punctuation)
			continue
		}
		info.minBlock = min(info.minBlock, part.minBlock)
		info.maxBlock = max(info.maxBlock, part.maxBlock)
		// A part's last block may be short; in the joined stream it is no longer the last
		// one, except for the last part's.
		if short := int(part.samples % uint64(part.maxBlock)); short != 0 && i < len(paths)-1 {
			info.minBlock = min(info.minBlock, short)
		}
		info.samples += part.samples
	}
	return info, infos, nil
}

// writeFLACHead writes "fLaC" and the one STREAMINFO block of the joined stream.
func writeFLACHead(w io.Writer, info flacInfo) error {
	var head bytes.Buffer
	head.WriteString("fLaC")
	// Metadata block header: last block (0x80), type 0 (STREAMINFO), 34 bytes.
	head.Write([]byte{0x80, 0, 0, 34})
	var si [34]byte
	binary.BigEndian.PutUint16(si[0:], uint16(info.minBlock))
	binary.BigEndian.PutUint16(si[2:], uint16(info.maxBlock))
	// si[4:10], the smallest and largest frame in bytes, stay zero: unknown.
	// 20 bits rate, 3 bits channels-1, 5 bits bits-1, 36 bits total samples.
	packed := uint64(info.rate)<<44 | uint64(info.channels-1)<<41 | uint64(info.bits-1)<<36 | info.samples
	binary.BigEndian.PutUint64(si[10:], packed)
	// si[18:34], the MD5 of the audio, stays zero: not computed.
	head.Write(si[:])
	_, err := w.Write(head.Bytes())
	return err
}

// readFLACInfo reads the STREAMINFO of the FLAC file at path.
func readFLACInfo(path string) (flacInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return flacInfo{}, err
	}
	defer f.Close()
	head := make([]byte, 4+4+34)
	if _, err := io.ReadFull(f, head); err != nil {
		return flacInfo{}, fmt.Errorf("reading FLAC header: %w", err)
	}
	info, _, err := parseFLACHeader(head)
	return info, err
}

// parseFLACHeader reads the "fLaC" marker and the metadata blocks, and returns the layout
// from STREAMINFO and the offset of the first frame.
func parseFLACHeader(data []byte) (flacInfo, int, error) {
	if !bytes.HasPrefix(data, []byte("fLaC")) {
		return flacInfo{}, 0, errors.New("not a FLAC file")
	}
	at := 4
	var info flacInfo
	for first := true; ; first = false {
		if at+4 > len(data) {
			return flacInfo{}, 0, errors.New("FLAC metadata cut short")
		}
		last, kind := data[at]&0x80 != 0, data[at]&0x7f
		size := int(data[at+1])<<16 | int(data[at+2])<<8 | int(data[at+3])
		body := at + 4
		if body+size > len(data) {
			return flacInfo{}, 0, errors.New("FLAC metadata cut short")
		}
		if first {
			if kind != 0 || size != 34 {
				return flacInfo{}, 0, errors.New("FLAC without STREAMINFO first")
			}
			packed := binary.BigEndian.Uint64(data[body+10:])
			info = flacInfo{
				minBlock: int(binary.BigEndian.Uint16(data[body:])),
				maxBlock: int(binary.BigEndian.Uint16(data[body+2:])),
				rate:     int(packed >> 44),
				channels: int(packed>>41&7) + 1,
				bits:     int(packed>>36&31) + 1,
				samples:  packed & (1<<36 - 1),
			}
		}
		at = body + size
		if last || first && at == len(data) { // the whole file, or just its STREAMINFO
			return info, at, nil
		}
	}
}

// flacFrames finds the frames of data from offset at. A frame ends where the next valid
// frame header starts with the frame's CRC-16 matching, or at the end of data; anything
// else is an error, so a damaged part is refused rather than joined.
func flacFrames(data []byte, at int) ([]flacFrame, error) {
	var frames []flacFrame
	for at < len(data) {
		f, ok := parseFrameHeader(data[at:])
		if !ok {
			return nil, fmt.Errorf("no FLAC frame header at byte %d", at)
		}
		f.start = at
		crc := flacbits.CRC16(0, data[at:at+f.hdrLen])
		end := -1
		for q := at + f.hdrLen; ; {
			// Jump to the next 0xff, the first byte of a sync code, checksumming the bytes
			// skipped on the way.
			k := bytes.IndexByte(data[q:], 0xff)
			if k < 0 {
				crc = flacbits.CRC16(crc, data[q:])
				break
			}
			crc = flacbits.CRC16(crc, data[q:q+k])
			q += k
			// The running CRC over a whole frame, its own CRC-16 included, is zero.
			if crc == 0 && q+1 < len(data) && data[q+1]&0xfe == 0xf8 {
				if _, ok := parseFrameHeader(data[q:]); ok {
					end = q
					break
				}
			}
			crc = flacbits.CRC16(crc, data[q:q+1])
			q++
		}
		if end < 0 {
			if crc != 0 {
				return nil, fmt.Errorf("FLAC frame at byte %d: checksum mismatch", at)
			}
			end = len(data)
		}
		f.end = end
		frames = append(frames, f)
		at = end
	}
	if len(frames) == 0 {
		return nil, errors.New("FLAC without frames")
	}
	return frames, nil
}

// parseFrameHeader reads a frame header at the start of b: its layout and block size, and
// whether it is one (sync code, no reserved values, CRC-8 right).
func parseFrameHeader(b []byte) (flacFrame, bool) {
	if len(b) < 6 || b[0] != 0xff || b[1]&0xfe != 0xf8 {
		return flacFrame{}, false
	}
	blockCode, rateCode := b[2]>>4, b[2]&0x0f
	if blockCode == 0 || rateCode == 0x0f || b[3]>>4 > 10 || b[3]&0x01 != 0 || (b[3]>>1)&7 == 3 {
		return flacFrame{}, false
	}
	f := flacFrame{numAt: 4}
	// The number is coded like UTF-8, up to 7 bytes.
	lead := b[4]
	switch {
	case lead < 0x80:
		f.numLen = 1
	case lead&0xe0 == 0xc0:
		f.numLen = 2
	case lead&0xf0 == 0xe0:
		f.numLen = 3
	case lead&0xf8 == 0xf0:
		f.numLen = 4
	case lead&0xfc == 0xf8:
		f.numLen = 5
	case lead&0xfe == 0xfc:
		f.numLen = 6
	case lead == 0xfe:
		f.numLen = 7
	default:
		return flacFrame{}, false
	}
	at := 4 + f.numLen
	if at > len(b) {
		return flacFrame{}, false
	}
	for _, c := range b[5:at] {
		if c&0xc0 != 0x80 {
			return flacFrame{}, false
		}
	}
	switch {
	case blockCode == 1:
		f.block = 192
	case blockCode <= 5:
		f.block = 576 << (blockCode - 2)
	case blockCode == 6:
		if at+1 > len(b) {
			return flacFrame{}, false
		}
		f.block = int(b[at]) + 1
		at++
	case blockCode == 7:
		if at+2 > len(b) {
			return flacFrame{}, false
		}
		f.block = int(binary.BigEndian.Uint16(b[at:])) + 1
		at += 2
	default:
		f.block = 256 << (blockCode - 8)
	}
	switch rateCode {
	case 12:
		at++
	case 13, 14:
		at += 2
	}
	if at+1 > len(b) || flacbits.CRC8(b[:at]) != b[at] {
		return flacFrame{}, false
	}
	f.hdrLen = at + 1
	return f, true
}

// crc16Replace returns the CRC-16 of newHead followed by n bytes, given the CRC-16 old of
// oldHead followed by the same n bytes, without reading them again. A CRC with initial 0 is
// linear: crc(A‖B) = crc(A)·x^(8|B|) + crc(B) mod the polynomial, so swapping the head adds
// (crc(oldHead) + crc(newHead))·x^(8n).
func crc16Replace(old uint16, oldHead, newHead []byte, n int) uint16 {
	return old ^ crc16MulMod(flacbits.CRC16(0, oldHead)^flacbits.CRC16(0, newHead), crc16XPow8(n))
}

// crc16MulMod multiplies two polynomials over GF(2) modulo FLAC's CRC-16 polynomial.
func crc16MulMod(a, b uint16) uint16 {
	var r uint16
	for i := 15; i >= 0; i-- {
		// r = r·x mod P, then add a if bit i of b is set (Horner's rule).
		if r&0x8000 != 0 {
			r = r<<1 ^ flacbits.Poly16
		} else {
			r <<= 1
		}
		if b>>i&1 != 0 {
			r ^= a
		}
	}
	return r
}

// crc16XPow8 is x^(8n) modulo FLAC's CRC-16 polynomial: what n zero bytes do to a CRC.
func crc16XPow8(n int) uint16 {
	result, base := uint16(1), uint16(0x0100) // x^0, x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			result = crc16MulMod(result, base)
		}
		base = crc16MulMod(base, base)
	}
	return result
}
