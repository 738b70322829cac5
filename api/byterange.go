package api

import (
	"strconv"
	"strings"
)

// byteRange is one satisfiable range of a file: bytes start to start+length-1.
type byteRange struct{ start, length int64 }

// parseRange reads a Range header for a file of size bytes. It returns ok=false when the
// header asks for no single byte range we serve (absent, several ranges, another unit:
// the whole file is sent), and unsatisfiable=true when it is one range outside the file
// (answered 416).
func parseRange(header string, size int64) (r byteRange, ok, unsatisfiable bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(header), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return byteRange{}, false, false
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return byteRange{}, false, false
	}
	if first == "" { // the last n bytes
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return byteRange{}, false, false
		}
		if n == 0 || size == 0 {
			return byteRange{}, false, true
		}
		n = min(n, size)
		return byteRange{size - n, n}, true, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return byteRange{}, false, false
	}
	end := size - 1
	if last != "" {
		if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
			return byteRange{}, false, false
		}
		end = min(end, size-1)
	}
	if start >= size {
		return byteRange{}, false, true
	}
	return byteRange{start, end - start + 1}, true, false
}
