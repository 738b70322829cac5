package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Ogg Opus joining, without decoding: the audio pages of several Ogg Opus files of the same
// layout are copied, in order, after the first file's two header pages, as one logical
// stream.
//
// Every page copied gets the first file's serial number, the next page sequence number and
// a fresh CRC. Its granule position (the count of 48 kHz samples decoded up to the last
// packet that ends on the page) is counted anew from the packets' own durations, read from
// each Opus packet's TOC byte, so it runs on across the seams; only the very last page keeps
// the end trim the encoder wrote for the last file (its final granule). A later file's
// pre-skip (the encoder's 6.5 ms of priming) is played, not skipped: the header allows one
// pre-skip, at the start.

// oggJoin writes Ogg Opus parts as one stream, part by part.
type oggJoin struct {
	w       io.Writer
	serial  uint32
	seq     uint32
	granule int64 // samples decoded before the current part
	parts   int
	pending []byte // the last page written is held back: it may be the stream's end
	endGran int64  // the held page's granule if it ends the stream
}

// add appends one part, a whole Ogg Opus file; last says it is the final one.
func (j *oggJoin) add(data []byte, last bool) error {
	pages, err := oggPages(data)
	if err != nil {
		return err
	}
	// The first two packets are the headers (OpusHead, OpusTags). ffmpeg's muxer puts each
	// on a page of its own, and the audio starts on a fresh page; anything else is refused
	// rather than guessed at.
	// A part may hold no audio at all (a chunk of text that is only punctuation).
	if len(pages) < 2 || pages[0].packetsEnded() != 1 || pages[1].packetsEnded() != 1 || pages[1].continued() ||
		len(pages) > 2 && pages[2].continued() {
		return errors.New("Ogg Opus part: headers not on two pages of their own")
	}
	head := pages[0].body()
	if len(head) < 19 || string(head[:8]) != "OpusHead" {
		return errors.New("Ogg Opus part: no OpusHead")
	}
	if j.parts == 0 {
		j.serial = pages[0].serial()
		for _, p := range pages[:2] {
			if err := j.emit(p, p.granule()); err != nil {
				return err
			}
		}
	}
	j.parts++

	var (
		toc      []byte // the first bytes of the packet being read, up to 2
		inPacket bool   // a packet is under way (it started on an earlier segment)
		decoded  int64  // samples of this part's packets that ended so far
	)
	for n, p := range pages[2:] {
		lacing := p.lacing()
		body := p.body()
		at := 0
		if p.continued() != inPacket {
			return fmt.Errorf("Ogg Opus part: page %d continues no packet", n+2)
		}
		ended := false
		for _, l := range lacing {
			seg := body[at : at+int(l)]
			at += int(l)
			if !inPacket {
				toc = toc[:0]
				inPacket = true
			}
			if len(toc) < 2 {
				toc = append(toc, seg[:min(len(seg), 2-len(toc))]...)
			}
			if l < 255 { // the packet ends here
				d, err := opusSamples(toc)
				if err != nil {
					return fmt.Errorf("Ogg Opus part, page %d: %w", n+2, err)
				}
				decoded += d
				inPacket = false
				ended = true
			}
		}
		g := int64(-1) // no packet ends on this page
		if ended {
			g = j.granule + decoded
		}
		if err := j.emit(p, g); err != nil {
			return err
		}
		// If this is the stream's end, its granule is the encoder's, trimmed to the input.
		j.endGran = j.granule + p.granule()
	}
	if inPacket {
		return errors.New("Ogg Opus part: last packet cut short")
	}
	j.granule += decoded
	if last {
		return j.flush(true)
	}
	return nil
}

// emit queues page p with granule g under the joined stream's serial and sequence,
// writing the page queued before it.
func (j *oggJoin) emit(p oggPage, g int64) error {
	if err := j.flush(false); err != nil {
		return err
	}
	page := append([]byte(nil), p...)
	page[5] &^= 0x04 // end of stream: only the last page, set by flush
	binary.LittleEndian.PutUint64(page[6:], uint64(g))
	binary.LittleEndian.PutUint32(page[14:], j.serial)
	binary.LittleEndian.PutUint32(page[18:], j.seq)
	j.seq++
	j.pending = page
	return nil
}

// flush writes the held page; end marks it as the end of the stream, with the encoder's
// final granule.
func (j *oggJoin) flush(end bool) error {
	if j.pending == nil {
		return nil
	}
	page := j.pending
	j.pending = nil
	if end {
		page[5] |= 0x04
		binary.LittleEndian.PutUint64(page[6:], uint64(j.endGran))
	}
	binary.LittleEndian.PutUint32(page[22:], 0)
	binary.LittleEndian.PutUint32(page[22:], oggCRC(page))
	_, err := j.w.Write(page)
	return err
}

// oggPage is one whole page.
type oggPage []byte

func (p oggPage) continued() bool   { return p[5]&0x01 != 0 }
func (p oggPage) granule() int64    { return int64(binary.LittleEndian.Uint64(p[6:])) }
func (p oggPage) serial() uint32    { return binary.LittleEndian.Uint32(p[14:]) }
func (p oggPage) lacing() []byte    { return p[27 : 27+int(p[26])] }
func (p oggPage) body() []byte      { return p[27+int(p[26]):] }
func (p oggPage) packetsEnded() int { return countBelow(p.lacing(), 255) }

func countBelow(b []byte, limit byte) int {
	n := 0
	for _, c := range b {
		if c < limit {
			n++
		}
	}
	return n
}

// oggPages cuts a file into its pages, checking each page's framing and CRC.
func oggPages(data []byte) ([]oggPage, error) {
	var pages []oggPage
	for at := 0; at < len(data); {
		if len(data)-at < 27 || string(data[at:at+4]) != "OggS" || data[at+4] != 0 {
			return nil, fmt.Errorf("no Ogg page at byte %d", at)
		}
		segments := int(data[at+26])
		size := 27 + segments
		if at+size > len(data) {
			return nil, fmt.Errorf("Ogg page at byte %d cut short", at)
		}
		for _, l := range data[at+27 : at+27+segments] {
			size += int(l)
		}
		if at+size > len(data) {
			return nil, fmt.Errorf("Ogg page at byte %d cut short", at)
		}
		page := oggPage(data[at : at+size])
		want := binary.LittleEndian.Uint32(page[22:])
		if oggCRCWithout(page) != want {
			return nil, fmt.Errorf("Ogg page at byte %d: checksum mismatch", at)
		}
		pages = append(pages, page)
		at += size
	}
	return pages, nil
}

// opusSamples is the duration, in 48 kHz samples, of the Opus packet that starts with toc
// (its first one or two bytes), from RFC 6716 section 3.1.
func opusSamples(toc []byte) (int64, error) {
	if len(toc) == 0 {
		return 0, errors.New("empty Opus packet")
	}
	config := toc[0] >> 3
	var frame int64
	switch {
	case config < 12: // SILK: 10, 20, 40, 60 ms
		frame = []int64{480, 960, 1920, 2880}[config%4]
	case config < 16: // hybrid: 10, 20 ms
		frame = []int64{480, 960}[config%2]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = []int64{120, 240, 480, 960}[config%4]
	}
	switch toc[0] & 3 {
	case 0:
		return frame, nil
	case 1, 2:
		return 2 * frame, nil
	}
	if len(toc) < 2 {
		return 0, errors.New("Opus packet without its frame count")
	}
	return frame * int64(toc[1]&0x3f), nil
}

// oggCRCTable drives Ogg's page checksum: polynomial 0x04c11db7, initial 0, not reflected.
var oggCRCTable = crcTable[uint32](0x04c11db7, 32)

// oggCRC is the checksum of a page whose CRC field is zero.
func oggCRC(page []byte) uint32 {
	var crc uint32
	for _, c := range page {
		crc = crc<<8 ^ oggCRCTable[byte(crc>>24)^c]
	}
	return crc
}

// oggCRCWithout is the checksum of a page, computed as if its CRC field were zero.
func oggCRCWithout(page []byte) uint32 {
	var crc uint32
	for i, c := range page {
		if i >= 22 && i < 26 {
			c = 0
		}
		crc = crc<<8 ^ oggCRCTable[byte(crc>>24)^c]
	}
	return crc
}
