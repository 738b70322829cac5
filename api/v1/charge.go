package v1

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
)

// callTimeout bounds one call's engine work.
const callTimeout = 10 * time.Minute

// result is what a call produced: the body and its type.
type result struct {
	body        []byte
	contentType string
}

// charge runs a priced call: its price held first (429 insufficient_quota when the
// balance cannot cover it, and nothing is done), the work done, the price settled, and
// only then the result sent. A failed work, a client that hung up before the answer, or a
// settle that failed, gives the price back.
func (a *API) charge(c *fiber.Ctx, call credit.Call, work func(ctx context.Context) (result, error)) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), callTimeout)
	defer cancel()
	h, err := a.hold(ctx, c, call)
	if err != nil {
		return a.fail(c, err, "")
	}
	wctx, stop := watchClient(ctx, c)
	out, err := work(wctx)
	stop()
	if err := a.end(ctx, h, call.Model, gone(wctx, err)); err != nil {
		return a.fail(c, err, "")
	}
	setCharged(c, h)
	c.Set(fiber.HeaderContentType, out.contentType)
	return c.Send(out.body)
}

// hold checks the request's Idempotency-Key and holds the call's price on its key.
func (a *API) hold(ctx context.Context, c *fiber.Ctx, call credit.Call) (credit.Hold, error) {
	call.Idem = c.Get("Idempotency-Key")
	if len(call.Idem) > 255 {
		return credit.Hold{}, invalid("Idempotency-Key", "invalid_idempotency_key", "The Idempotency-Key is longer than 255 characters.")
	}
	return a.deps.Credit.Ledger.Hold(ctx, keyOfCall(c).ID, call)
}

// end settles a call whose answer was delivered (err nil) and counts it; otherwise, or
// when the settle fails, it gives the price back and returns why.
func (a *API) end(ctx context.Context, h credit.Hold, model string, err error) error {
	if err == nil {
		err = a.deps.Credit.Ledger.Settle(ctx, h)
	}
	if err != nil {
		if rerr := a.deps.Credit.Ledger.Release(context.WithoutCancel(ctx), h); rerr != nil {
			a.deps.Log.Warn("giving a failed call's price back; tried again in a moment", "call", h.ID, "err", rerr)
			go releaseLater(a.deps.Credit.Ledger, a.deps.Log, h, releaseRetries)
		}
		return err
	}
	if a.deps.Observe != nil && !h.Repeat {
		a.deps.Observe(model, h.Amount)
	}
	return nil
}

// releaseRetries are the waits before each new try of a release that failed (the database
// away for a moment, as when a restart cut the settle's commit): about a minute in all. Past
// them the hold waits for the reconciler's stale-hold bound, and so would a live process's
// hold after any failure, which is why a failed release is tried again here.
var releaseRetries = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second}

// releaseLater tries the release of h again after each of waits, until one goes through
// (a release that finds the hold ended changes nothing, and goes through too).
func releaseLater(l *credit.Ledger, log *slog.Logger, h credit.Hold, waits []time.Duration) {
	var err error
	for _, wait := range waits {
		time.Sleep(wait)
		if err = l.Release(context.Background(), h); err == nil {
			log.Info("a failed call's price given back on a later try", "call", h.ID)
			return
		}
	}
	log.Error("giving a failed call's price back failed; the reconciler gives it back after the stale-hold bound",
		"call", h.ID, "err", err)
}

// gone is a work's outcome as the client saw it: errClientGone when the client hung up
// while it worked (nobody receives the answer: nothing is charged for it).
func gone(wctx context.Context, err error) error {
	if errors.Is(context.Cause(wctx), errClientGone) {
		return errClientGone
	}
	return err
}

// setCharged says what the call costs, to the thousandth of a cent.
func setCharged(c *fiber.Ctx, h credit.Hold) {
	c.Set("Parla-Charged-Cents", strconv.FormatFloat(credit.Cents(h.Amount), 'f', 3, 64))
}

// fingerprint names what a request asked for, so that an Idempotency-Key used again with
// another request is refused.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
