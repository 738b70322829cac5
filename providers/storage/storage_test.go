package storage

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"results/ord_123.mp3", true},
		{"uploads/2025-01-01/a-b_c.D9", true},
		{"x", true},
		{"a.b.c", true},
		{"", false},
		{"../x", false},
		{"/abs", false},
		{"a/../../b", false},
		{"a/./b", false},
		{"..", false},
		{".", false},
		{".tmp/put-1", false},
		{"a/.hidden", false},
		{"a//b", false},
		{"a/", false},
		{`a\b`, false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
		{"a%2e%2e", false},
		{strings.Repeat("a", MaxKeyLen), true},
		{strings.Repeat("a", MaxKeyLen+1), false},
	}
	for _, tc := range tests {
		t.Run(url.PathEscape(tc.key), func(t *testing.T) {
			err := ValidateKey(tc.key)
			if tc.ok && err != nil {
				t.Fatalf("ValidateKey(%q) = %v, want nil", tc.key, err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("ValidateKey(%q) = %v, want ErrInvalidKey", tc.key, err)
			}
		})
	}
}

func TestSafeFilename(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "speech.mp3", "speech.mp3"},
		{"spaces", "my talk (final).mp3", "my_talk_final.mp3"},
		{"quotes and semicolons", `a";b=c.mp3`, "a_b_c.mp3"},
		{"header injection", "a\r\nSet-Cookie: x=y.mp3", "a_Set-Cookie_x_y.mp3"},
		{"path traversal", "../../etc/passwd", "etc_passwd"},
		{"dots in the middle", "a..b...c.mp3", "a.b.c.mp3"},
		{"no base", ".mp3", "mp3"},
		{"ext not alnum", "a.m p3", "a.m_p3"},
		{"windows path", `C:\Users\x\file.wav`, "C_Users_x_file.wav"},
		{"hidden", ".bashrc", "bashrc"},
		{"only dots", "...", "download"},
		{"empty", "", "download"},
		{"non latin", "привет.mp3", "download.mp3"},
		{"non latin with latin", "Лекция 1.mp3", "1.mp3"},
		{"cjk", "音声.flac", "download.flac"},
		{"underscores collapse", "a___b", "a_b"},
		{"invalid utf8", "a\xff\xfeb.mp3", "a_b.mp3"},
		{"long keeps extension", strings.Repeat("x", 300) + ".opus", strings.Repeat("x", 115) + ".opus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SafeFilename(tc.in)
			if got != tc.want {
				t.Fatalf("SafeFilename(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) > maxFilenameLen {
				t.Fatalf("SafeFilename(%q) is %d bytes, over %d", tc.in, len(got), maxFilenameLen)
			}
			for _, r := range got {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
					t.Fatalf("SafeFilename(%q) = %q contains %q", tc.in, got, r)
				}
			}
		})
	}
}

func TestContentDisposition(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"ascii", "speech.mp3", `attachment; filename="speech.mp3"`},
		{"cyrillic", "Лекция 1.mp3", `attachment; filename="1.mp3"; filename*=UTF-8''%D0%9B%D0%B5%D0%BA%D1%86%D0%B8%D1%8F%201.mp3`},
		{"cjk", "音声.flac", `attachment; filename="download.flac"; filename*=UTF-8''%E9%9F%B3%E5%A3%B0.flac`},
		{"path in unicode name", "../тест/x.mp3", `attachment; filename="x.mp3"; filename*=UTF-8''%D1%82%D0%B5%D1%81%D1%82_x.mp3`},
		{"injection", "a\";\r\nX: y", `attachment; filename="a_X_y"`},
		{"empty", "", `attachment; filename="download"`},
		{"only symbols", "☃☃.mp3", `attachment; filename="download.mp3"`},
		{"accents", "été.mp3", `attachment; filename="t.mp3"; filename*=UTF-8''%C3%A9t%C3%A9.mp3`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ContentDisposition(tc.in)
			if got != tc.want {
				t.Fatalf("ContentDisposition(%q) =\n %s\nwant\n %s", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "\r\n\x00") {
				t.Fatalf("header value %q contains control characters", got)
			}
		})
	}
}
