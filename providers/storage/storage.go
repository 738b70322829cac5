// Package storage keeps results and uploads: on local disk by default (Disk) or in a MinIO /
// S3 bucket (MinIO). Both implement providers.Storage. Keys are opaque strings made by the
// app; both back ends accept the same key alphabet so that switching back end never turns
// a valid key into an invalid one.
package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidKey is returned (wrapped) for a key outside the accepted alphabet or shape.
var ErrInvalidKey = errors.New("invalid storage key")

// MaxKeyLen is the longest key accepted, well under S3's 1024-byte limit and typical
// file-system path limits.
const MaxKeyLen = 512

// Entry is one stored object as List reports it.
type Entry struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// ValidateKey reports whether key is usable: 1–MaxKeyLen characters from [a-zA-Z0-9/_.-],
// slash-separated segments that are neither empty nor start with a dot (which rules out
// ".", ".." and hidden files), so no leading or trailing slash and no "//".
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if !keyByte(key[i]) {
			return fmt.Errorf("%w: %q: character %q not allowed", ErrInvalidKey, key, key[i])
		}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" {
			return fmt.Errorf("%w: %q: empty path segment", ErrInvalidKey, key)
		}
		if seg[0] == '.' {
			return fmt.Errorf("%w: %q: segment %q starts with a dot", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// validatePrefix accepts "" or a prefix made of key characters whose segments do not
// start with a dot.
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if strings.HasPrefix(prefix, "/") || len(prefix) > MaxKeyLen {
		return fmt.Errorf("%w: prefix %q", ErrInvalidKey, prefix)
	}
	for _, seg := range strings.Split(prefix, "/") {
		if strings.HasPrefix(seg, ".") {
			return fmt.Errorf("%w: prefix %q: segment %q starts with a dot", ErrInvalidKey, prefix, seg)
		}
	}
	for i := 0; i < len(prefix); i++ {
		if !keyByte(prefix[i]) {
			return fmt.Errorf("%w: prefix %q: character %q not allowed", ErrInvalidKey, prefix, prefix[i])
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '/' || c == '_' || c == '.' || c == '-'
}

// maxFilenameLen caps the download name; browsers and file systems cope with more, but a
// long name is never useful and bloats the header.
const maxFilenameLen = 120

// SafeFilename turns any name into one made only of ASCII letters, digits, '-', '_' and
// '.': a short alphanumeric extension is kept; in the rest, other characters become '_',
// runs of '_' or '.' collapse and separators are trimmed from both ends (no hidden files,
// no ".."). A name with nothing left becomes "download" (plus its extension); the result
// is at most 120 bytes.
func SafeFilename(name string) string {
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 && len(name)-i-1 <= 10 && isAlnum(name[i+1:]) {
		base, ext = name[:i], name[i:]
	}
	var b strings.Builder
	var last rune
	for _, r := range base {
		if !(r < utf8.RuneSelf && (r == '-' || r == '.' || r == '_' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')) {
			r = '_'
		}
		if (r == '_' || r == '.') && r == last {
			continue
		}
		b.WriteRune(r)
		last = r
	}
	s := strings.Trim(b.String(), "._-")
	if len(s) > maxFilenameLen-len(ext) {
		s = strings.TrimRight(s[:maxFilenameLen-len(ext)], "._-")
	}
	if s == "" {
		s = "download"
	}
	return s + ext
}

// isAlnum reports whether s is non-empty ASCII letters and digits.
func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// ContentDisposition returns an "attachment" Content-Disposition value for name: the
// ASCII-safe filename= from SafeFilename, plus an RFC 5987 filename*= carrying the
// original Unicode name (control characters and path separators removed) when that differs,
// so browsers that understand it keep non-Latin names.
func ContentDisposition(name string) string {
	safe := SafeFilename(name)
	v := `attachment; filename="` + safe + `"`
	if u := unicodeFilename(name); u != "" && u != safe {
		v += "; filename*=UTF-8''" + encodeRFC5987(u)
	}
	return v
}

// unicodeFilename keeps letters, digits, marks and a few punctuation characters of a
// valid UTF-8 name, dropping everything a browser might read as a path or a control. It
// returns "" for a name without non-ASCII letters, for which SafeFilename says it all.
func unicodeFilename(name string) string {
	if !utf8.ValidString(name) {
		return ""
	}
	var b strings.Builder
	var last rune
	nonASCII := false
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			nonASCII = nonASCII || r >= utf8.RuneSelf
		case r == '-' || r == '_' || r == '.' || r == ' ':
		default:
			r = '_'
		}
		if (r == '_' || r == '.' || r == ' ') && r == last {
			continue
		}
		b.WriteRune(r)
		last = r
	}
	if !nonASCII {
		return ""
	}
	s := strings.Trim(b.String(), "._- ")
	if utf8.RuneCountInString(s) > maxFilenameLen {
		s = strings.TrimRight(string([]rune(s)[:maxFilenameLen]), "._- ")
	}
	return s
}

// encodeRFC5987 percent-encodes s as an RFC 5987 value-chars string.
func encodeRFC5987(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
