// Package orders is the order book: the Order and its states, the price rule, validation,
// the SQL store, the parts that take, pay, fulfil and sweep orders (see Book), the
// visitor's letters (MailLetters) and the operator's side for the admin area (Operator).
// It knows nothing about HTTP.
package orders

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
)

// Status is where an order is in its life.
type Status string

// The states of an order. awaiting_payment → paid → processing → done, or → failed →
// refunded when fulfilment fails for good; awaiting_payment → expired when the checkout
// lapses, and done → expired when the result is swept after 10 days.
const (
	AwaitingPayment Status = "awaiting_payment"
	Paid            Status = "paid"
	Processing      Status = "processing"
	Done            Status = "done"
	Failed          Status = "failed"
	Refunded        Status = "refunded"
	Expired         Status = "expired"
)

// Order is one paid (or to be paid) piece of work. The database row is the truth.
type Order struct {
	ID            string
	Service       Service
	Key           string // the page's order key ("" for orders placed without one)
	Status        Status
	Params        json.RawMessage // service parameters (params.go), erased after delivery
	Email         string          // erased once the result message is sent
	Locale        string
	Amount        int64 // minor units
	Currency      string
	SessionID     string
	PaymentIntent string
	Progress      int    // 0–100
	ResultKey     string // storage key of the result
	ResultName    string // attachment filename
	LinkToken     string
	LinkExpiresAt time.Time
	Error         string // client-safe reason for failed/refunded orders
	MailedAt      time.Time
	CreatedAt     time.Time
	PaidAt        time.Time
	DoneAt        time.Time
}

// Paid reports whether money has been taken for the order (whatever happened next).
func (o Order) Paid() bool {
	switch o.Status {
	case Paid, Processing, Done, Failed, Refunded:
		return true
	case Expired:
		return !o.PaidAt.IsZero()
	}
	return false
}

func newID() string { return randomString(16) }

// randomString is n random bytes, URL-safe: order ids, upload ids, link tokens.
func randomString(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on Linux
	}
	return base64.RawURLEncoding.EncodeToString(buf)
}
