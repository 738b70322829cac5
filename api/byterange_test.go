package api

import "testing"

func TestParseRange(t *testing.T) {
	tests := []struct {
		header          string
		want            byteRange
		ok, unsatisfied bool
	}{
		{"", byteRange{}, false, false},
		{"bytes=0-99", byteRange{0, 100}, true, false},
		{"bytes=100-", byteRange{100, 900}, true, false},
		{"bytes=-100", byteRange{900, 100}, true, false},
		{"bytes=-5000", byteRange{0, 1000}, true, false},
		{"bytes=990-5000", byteRange{990, 10}, true, false},
		{"bytes=999-999", byteRange{999, 1}, true, false},
		{"bytes=1000-", byteRange{}, false, true},
		{"bytes=-0", byteRange{}, false, true},
		{"bytes=5-2", byteRange{}, false, false},
		{"bytes=0-1,5-6", byteRange{}, false, false},
		{"items=0-1", byteRange{}, false, false},
		{"bytes=x-1", byteRange{}, false, false},
		{"bytes=-", byteRange{}, false, false},
		{"bytes=-9223372036854775808", byteRange{}, false, false},
	}
	for _, tt := range tests {
		r, ok, unsat := parseRange(tt.header, 1000)
		if r != tt.want || ok != tt.ok || unsat != tt.unsatisfied {
			t.Errorf("parseRange(%q) = %+v %v %v, want %+v %v %v", tt.header, r, ok, unsat, tt.want, tt.ok, tt.unsatisfied)
		}
	}
}
