package orders

import (
	"context"
	"testing"
)

// The session secret is made once, read the same by every caller, and replaced (audited)
// by SignEveryoneOut; on SQLite and Postgres alike.
func TestOperatorSessionSecretIsMadeOnceAndReplaced(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	op := f.book.Operator()
	first, err := op.SessionSecret(ctx)
	if err != nil || len(first) < 40 {
		t.Fatalf("secret %q: %v", first, err)
	}
	if again, err := f.book.Operator().SessionSecret(ctx); again != first || err != nil {
		t.Errorf("read again: %q %v, want the first", again, err)
	}
	device, err := op.DeviceSecret(ctx)
	if err != nil || len(device) < 40 || device == first {
		t.Fatalf("device secret %q: %v", device, err)
	}
	out, err := op.SignEveryoneOut(ctx, Actor{Who: "password", IP: "127.0.0.1"}, false)
	if err != nil || out.Result != "ok: every session signed out" {
		t.Fatalf("sign everyone out: %+v %v", out, err)
	}
	if next, err := op.SessionSecret(ctx); next == first || err != nil {
		t.Errorf("after signing everyone out: %q %v", next, err)
	}
	if kept, err := op.DeviceSecret(ctx); kept != device || err != nil {
		t.Errorf("device secret after signing everyone out: %q %v, want it kept", kept, err)
	}
	// Asked to, it revokes the device cookies too.
	out, err = op.SignEveryoneOut(ctx, Actor{Who: "password", IP: "127.0.0.1"}, true)
	if err != nil || out.Result != "ok: every session signed out, every device cookie revoked" {
		t.Fatalf("sign everyone out, devices too: %+v %v", out, err)
	}
	if next, err := op.DeviceSecret(ctx); next == device || err != nil {
		t.Errorf("device secret after revoking: %q %v, want a new one", next, err)
	}
	audit, err := op.Audit(ctx, "", 10)
	if err != nil || len(audit) != 2 || audit[0].Action != "sign_out_everyone" || audit[1].Action != "sign_out_everyone" {
		t.Errorf("audit: %+v %v", audit, err)
	}
}
