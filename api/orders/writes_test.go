package orders

import (
	"testing"

	"parla/providers/testkit"
)

// harmless are the order book's conditional updates through sqldb's Update that may
// change no row without consequence, by the name they give; each says why.
var harmless = map[string]string{
	"giving back a run of order": "a run of another claim is not this one's to give back: the order was taken over",
	"taking back the refund mark of delivered order": "an order no longer delivered was refunded or moved by " +
		"its own path, which owns the mark from then on",
}

// Every money write of the order book checks what it changed (testkit.CheckWrites), as the
// API credit's do.
func TestConditionalWritesCheckWhatTheyChanged(t *testing.T) {
	testkit.CheckWrites(t, ".", harmless)
}
