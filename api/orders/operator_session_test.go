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
	out, err := op.SignEveryoneOut(ctx, Actor{Who: "password", IP: "127.0.0.1"})
	if err != nil || out.Result != "ok: every session signed out" {
		t.Fatalf("sign everyone out: %+v %v", out, err)
	}
	if next, err := op.SessionSecret(ctx); next == first || err != nil {
		t.Errorf("after signing everyone out: %q %v", next, err)
	}
	audit, err := op.Audit(ctx, "", 10)
	if err != nil || len(audit) != 1 || audit[0].Action != "sign_out_everyone" {
		t.Errorf("audit: %+v %v", audit, err)
	}
}
