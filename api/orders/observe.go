package orders

import "time"

// EventKind names a moment in an order's life that the operator counts (metrics).
type EventKind string

// The events an Observer hears. Each carries only what a metric may show: the service,
// amounts, durations, a stable reason code; never an address, a token, an id or a file name.
const (
	// EventCreated: an order was stored and its checkout opened.
	EventCreated EventKind = "created"
	// EventPaid: a payment was recorded for the order (Amount, Currency).
	EventPaid EventKind = "paid"
	// EventProduced: one fulfilment attempt ended (Took, Audio; Reason "" on success, else
	// "failed").
	EventProduced EventKind = "produced"
	// EventDelivered: the order is done.
	EventDelivered EventKind = "delivered"
	// EventFailed: fulfilment failed for good (Reason); a refund follows.
	EventFailed EventKind = "failed"
	// EventRefunded: the money went back (Reason, Amount, Currency).
	EventRefunded EventKind = "refunded"
	// EventMailed: a letter was handed to the mailer (Reason: its kind, "delivered" or
	// "refunded"; Err set when sending failed).
	EventMailed EventKind = "mailed"
	// EventUpload: an audio upload was accepted (Bytes).
	EventUpload EventKind = "upload"
)

// Event is one thing that happened to an order.
type Event struct {
	Kind     EventKind
	Service  Service
	Amount   int64 // minor units (paid, refunded)
	Currency string
	// Reason is a stable code: the refund's or failure's reason, or the letter's kind.
	Reason string
	Took   time.Duration // the work of one fulfilment attempt
	Audio  time.Duration // the audio it made or transcribed; 0 when unknown
	Bytes  int64         // an upload's size
	Err    error         // a letter that could not be sent
}

// Observer hears of an order's state changes (the metrics package counts them). Observe
// must be quick and must not block: it runs on the order's own path.
type Observer interface {
	Observe(Event)
}

// noObserver is the default: nobody is listening.
type noObserver struct{}

func (noObserver) Observe(Event) {}
