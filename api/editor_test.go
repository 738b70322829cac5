package api

import (
	"testing"

	"parla/api/orders"
)

// A change of the transcript names the version it started from: the ETag its GET answered,
// or "*". None is 428 version_required; a tag that is none of ours (weak, a list, another
// server's) is stale: 409 edit_conflict.
func TestIfMatchVersion(t *testing.T) {
	for _, c := range []struct {
		header string
		want   int64
		code   string
	}{
		{`"0"`, 0, ""},
		{`"17"`, 17, ""},
		{` "17" `, 17, ""},
		{`*`, orders.AnyVersion, ""},
		{``, 0, "version_required"},
		{`17`, 0, "edit_conflict"},
		{`W/"17"`, 0, "edit_conflict"},
		{`"17", "18"`, 0, "edit_conflict"},
		{`"-1"`, 0, "edit_conflict"},
		{`"017"`, 0, "edit_conflict"},
		{`"a1b2"`, 0, "edit_conflict"},
	} {
		v, err := ifMatchVersion(c.header)
		if c.code == "" {
			if err != nil || v != c.want {
				t.Errorf("If-Match %q: %d, %v; want %d", c.header, v, err, c.want)
			}
			continue
		}
		if e := classify(err); err == nil || e.kind.code != c.code {
			t.Errorf("If-Match %q: %d, %v; want %s", c.header, v, err, c.code)
		}
	}
	if k := kindOf("version_required"); k.status != 428 {
		t.Errorf("version_required is %d", k.status)
	}
	if k := classify(orders.ErrEditConflict); k.kind.code != "edit_conflict" || k.kind.status != 409 {
		t.Errorf("a stale version answers %s %d", k.kind.code, k.kind.status)
	}
}
