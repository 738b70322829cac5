package links

import (
	"net/netip"
	"strings"
	"testing"
)

func TestForbiddenReason(t *testing.T) {
	tests := []struct {
		addr      string
		forbidden bool
	}{
		{"127.0.0.1", true}, {"127.255.255.254", true}, {"0.0.0.0", true}, {"0.1.2.3", true},
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.0.1", true},
		{"100.64.0.1", true}, {"100.127.255.255", true}, {"169.254.169.254", true},
		{"224.0.0.251", true}, {"239.255.255.250", true}, {"255.255.255.255", true},
		{"::", true}, {"::1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:169.254.169.254", true},
		{"::10.0.0.1", true}, {"64:ff9b::a00:1", true}, {"64:ff9b:1::1", true},
		{"::ffff:0:127.0.0.1", true}, {"::ffff:0:10.1.2.3", true}, {"::ffff:0:169.254.169.254", true},
		{"2002:c0a8:0101::1", true}, {"2001:0:4136:e378::1", true}, {"fc00::1", true},
		{"fd00:ec2::254", true}, {"fe80::1", true}, {"febf::1", true}, {"ff02::1", true},
		{"2001:db8::1", true},

		{"8.8.8.8", false}, {"93.184.216.34", false}, {"172.15.255.255", false},
		{"172.32.0.1", false}, {"100.63.255.255", false}, {"100.128.0.1", false},
		{"2606:4700:4700::1111", false}, {"::ffff:8.8.8.8", false}, {"64:ff9b::808:808", false}, {"::ffff:0:8.8.8.8", false},
		{"2002:808:808::1", false}, {"2a00:1450:4001:80e::200e", false},
	}
	for _, tt := range tests {
		got := forbiddenReason(netip.MustParseAddr(tt.addr)) != ""
		if got != tt.forbidden {
			t.Errorf("forbiddenReason(%s) forbidden=%v, want %v", tt.addr, got, tt.forbidden)
		}
	}
}

func TestCheckURLNormalises(t *testing.T) {
	g := NewGuard(GuardConfig{AllowPrivate: true})
	tests := []struct{ raw, want string }{
		{"HTTP://Example.COM./a/b.mp4?x=1#frag", "http://example.com/a/b.mp4?x=1"},
		{"http://127.1/v.mp4", "http://127.0.0.1/v.mp4"},
		{"http://2130706433:8080/", "http://127.0.0.1:8080/"},
		{"http://0x7f000001/", "http://127.0.0.1/"},
		{"http://0177.0.0.1/", "http://127.0.0.1/"},
		{"http://0x5d.0xb8.0xd8.0x22/", "http://93.184.216.34/"},
		{"http://[::FFFF:7F00:1]/", "http://[::ffff:127.0.0.1]/"},
		{"https://[2606:4700::1]:8443/x", "https://[2606:4700::1]:8443/x"},
		{"https://cdn.example.org/v%20x.mp4", "https://cdn.example.org/v%20x.mp4"},
		{"https://Bücher.example/v.mp4", "https://xn--bcher-kva.example/v.mp4"},
		{"http://１２７.０.０.１/", "http://127.0.0.1/"},
	}
	for _, tt := range tests {
		u, err := g.CheckURL(tt.raw)
		if err != nil {
			t.Errorf("CheckURL(%s): %v", tt.raw, err)
			continue
		}
		if u.String() != tt.want {
			t.Errorf("CheckURL(%s) = %s, want %s", tt.raw, u, tt.want)
		}
	}
}

func TestInetAton(t *testing.T) {
	tests := []struct {
		host string
		want string // "" means malformed
	}{
		{"127.1", "127.0.0.1"}, {"127.0.1", "127.0.0.1"}, {"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"}, {"0x7f.1", "127.0.0.1"}, {"0177.0.0.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"}, {"4294967295", "255.255.255.255"}, {"0x", "0.0.0.0"},
		{"1.2.3.4", "1.2.3.4"}, {"0", "0.0.0.0"},
		{"4294967296", ""}, {"1.2.3.256", ""}, {"1.2.65536", ""}, {"08.1.1.1", ""},
		{"1.2.3.4.5", ""}, {"1..2", ""}, {"0x1g.1", ""},
	}
	for _, tt := range tests {
		addr, ok := inetAton(strings.Split(tt.host, "."))
		got := ""
		if ok {
			got = addr.String()
		}
		if got != tt.want {
			t.Errorf("inetAton(%s) = %q, want %q", tt.host, got, tt.want)
		}
	}
}
