package mail

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSMTPURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want SMTPConfig
	}{
		{"smtp defaults", "smtp://mail.example.com",
			SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSOpportunistic}},
		{"smtp with credentials and port", "smtp://user:pass@mail.example.com:2525",
			SMTPConfig{Host: "mail.example.com", Port: 2525, Username: "user", Password: "pass", TLS: TLSOpportunistic}},
		{"percent-encoded credentials", "smtp://us%40er:p%3Ass%2Fw%40rd@mail.example.com",
			SMTPConfig{Host: "mail.example.com", Port: 587, Username: "us@er", Password: "p:ss/w@rd", TLS: TLSOpportunistic}},
		{"starttls required", "smtp://mail.example.com:587?starttls=required",
			SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSRequired}},
		{"starttls none", "smtp://127.0.0.1:1025?starttls=none",
			SMTPConfig{Host: "127.0.0.1", Port: 1025, TLS: TLSNone}},
		{"starttls explicit opportunistic, upper case", "smtp://mail.example.com?starttls=OPPORTUNISTIC",
			SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSOpportunistic}},
		{"smtps defaults", "smtps://u:p@mail.example.com",
			SMTPConfig{Host: "mail.example.com", Port: 465, Username: "u", Password: "p", TLS: TLSImplicit}},
		{"scheme is case-insensitive", "SMTPS://mail.example.com:10465",
			SMTPConfig{Host: "mail.example.com", Port: 10465, TLS: TLSImplicit}},
		{"IPv6 host", "smtp://[::1]:25?starttls=none",
			SMTPConfig{Host: "::1", Port: 25, TLS: TLSNone}},
		{"from override", "smtp://mail.example.com?from=Parla%20%3Corders%40parla.example%3E",
			SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSOpportunistic, From: "Parla <orders@parla.example>"}},
		{"insecure skip verify", "smtps://mail.example.com?insecure_skip_verify=1",
			SMTPConfig{Host: "mail.example.com", Port: 465, TLS: TLSImplicit, InsecureSkipVerify: true}},
		{"timeout", "smtp://mail.example.com?timeout=3s&insecure_skip_verify=false",
			SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSOpportunistic, Timeout: 3 * time.Second}},
		{"trailing slash", "smtp://mail.example.com/",
			SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSOpportunistic}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSMTPURL(tt.in)
			if err != nil {
				t.Fatalf("ParseSMTPURL(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSMTPURL(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSMTPURLErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantMsg string // a fragment the operator should see
	}{
		{"empty", "", "empty"},
		{"no scheme", "mail.example.com:25", "scheme"},
		{"wrong scheme", "http://mail.example.com", `scheme "http"`},
		{"no host", "smtp://", "no host"},
		{"no host with credentials", "smtp://user:secret@:25", "no host"},
		{"port not a number", "smtp://mail.example.com:abc", ""},
		{"port zero", "smtp://mail.example.com:0", "out of range"},
		{"port too big", "smtp://mail.example.com:70000", "out of range"},
		{"empty port", "smtp://mail.example.com:", "empty port"},
		{"path", "smtp://mail.example.com/inbox", "path"},
		{"fragment", "smtp://mail.example.com#x", "fragment"},
		{"opaque", "smtp:mail.example.com", "host"},
		{"unknown starttls", "smtp://mail.example.com?starttls=maybe", "starttls"},
		{"starttls on smtps", "smtps://mail.example.com?starttls=required", "smtps"},
		{"unknown parameter", "smtp://mail.example.com?tls=1", `unknown parameter "tls"`},
		{"repeated parameter", "smtp://mail.example.com?starttls=none&starttls=required", "2 times"},
		{"bad from", "smtp://mail.example.com?from=not-an-address", "from"},
		{"from with line break", "smtp://mail.example.com?from=a%40b.c%0D%0ABcc%3A%20x%40y.z", "from"},
		{"bad insecure flag", "smtp://mail.example.com?insecure_skip_verify=yes", "insecure_skip_verify"},
		{"bad timeout", "smtp://mail.example.com?timeout=soon", "timeout"},
		{"negative timeout", "smtp://mail.example.com?timeout=-1s", "timeout"},
		{"password without user", "smtp://:secret@mail.example.com", "password without a user"},
		{"control character", "smtp://user:secret@mail.example.com\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSMTPURL(tt.in)
			if err == nil {
				t.Fatalf("ParseSMTPURL(%q): no error", tt.in)
			}
			if !errors.Is(err, ErrBadSMTPURL) {
				t.Errorf("error %v does not wrap ErrBadSMTPURL", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q repeats the password", err)
			}
		})
	}
}

func TestSMTPConfigDefaults(t *testing.T) {
	tests := []struct {
		name    string
		in      SMTPConfig
		want    SMTPConfig
		wantErr string
	}{
		{"fills defaults", SMTPConfig{Host: "h", Port: 25},
			SMTPConfig{Host: "h", Port: 25, TLS: TLSOpportunistic, From: DefaultFrom, Timeout: DefaultTimeout}, ""},
		{"keeps values", SMTPConfig{Host: "h", Port: 25, TLS: TLSNone, From: "a@b.c", Timeout: time.Second},
			SMTPConfig{Host: "h", Port: 25, TLS: TLSNone, From: "a@b.c", Timeout: time.Second}, ""},
		{"no host", SMTPConfig{Port: 25}, SMTPConfig{}, "no host"},
		{"no port", SMTPConfig{Host: "h"}, SMTPConfig{}, "port"},
		{"bad TLS mode", SMTPConfig{Host: "h", Port: 25, TLS: "sometimes"}, SMTPConfig{}, "TLS mode"},
		{"bad from", SMTPConfig{Host: "h", Port: 25, From: "nobody"}, SMTPConfig{}, "from"},
		{"negative timeout", SMTPConfig{Host: "h", Port: 25, Timeout: -time.Second}, SMTPConfig{}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.withDefaults()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one mentioning %q", err, tt.wantErr)
				}
				if _, err := NewSMTP(tt.in); err == nil {
					t.Errorf("NewSMTP accepted %+v", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSMTPConfigStringHidesPassword(t *testing.T) {
	cfg, err := ParseSMTPURL("smtp://user:hunter2@mail.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.String(); strings.Contains(s, "hunter2") || !strings.Contains(s, "mail.example.com:587") {
		t.Errorf("String() = %q", s)
	}
}
