package credit

import (
	"testing"

	"parla/providers/testkit"
)

// harmless are the conditional updates through sqldb's Update (which drops the count) that
// may change no row without consequence, by the name they give; each says why.
var harmless = map[string]string{
	"expiring a credit purchase": "a purchase paid or expired meanwhile is left as it is",
	"refunding a mismatched credit payment": "the payment is refunded at the provider already; a row " +
		"another path moved (the same mismatch seen twice) stays as that path left it",
	"restoring a key after a failed refund": "only the failed refund's own mark (status refunded) is undone",
	"forgetting a sealed key":               "a key not yet shown and mailed stays sealed until both are done",
	"forgetting stale sealed keys":          "a key still needed stays sealed; a pass that finds none erases none",
	"giving back a failed repeat of call":   "no row: this repeat's count was given back already",
}

// Every money write checks what it changed (testkit.CheckWrites). Before, Release dropped
// the count of its conditional release and of its repeat's give-back.
func TestConditionalWritesCheckWhatTheyChanged(t *testing.T) {
	testkit.CheckWrites(t, ".", harmless)
}
