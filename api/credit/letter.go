package credit

import (
	"context"
	"errors"
	"strings"
	"time"

	"parla/providers"
	"parla/providers/mail"
	"parla/providers/sqldb"
	"parla/providers/texts"
)

// A key's letter is claimed on its row before it is sent, so that it is never sent twice;
// a send that certainly did not leave gives the claim back and is tried again, a few times
// with a growing pause, by the page's polls or the reconciler (Reconcile); a refusal for
// good, or a send of unknown fate, keeps the claim. The sealed key is erased as soon as it
// is not needed, and within bounds whatever happened (forgetStale).

// letterTimeout bounds a letter's claim, send and record, within a payment provider's
// webhook timeout.
const letterTimeout = 20 * time.Second

// The letter's tries: at most letterTries sends, the pause after the nth certain failure
// letterPause × 2^(n-1) (1, 2, 4, 8 minutes), at most resendBatch letters a reconciler's
// pass; a key never shown (its buyer left before the confirmation page) stays sealed
// keepUnshown after its payment, long after its letter ended, for the page opened again.
const (
	letterTries = 5
	letterPause = time.Minute
	resendBatch = 20
	keepUnshown = 24 * time.Hour
)

// A letter's states (the mail_state column).
const (
	mailSending = "sending" // claimed; its send's fate not recorded yet
	mailSent    = "sent"
	mailRetry   = "retry"   // certainly not sent: its claim given back, to be sent again
	mailFailed  = "failed"  // of unknown fate (no answer), or not sent in letterTries
	mailRefused = "refused" // refused for good by the mail server: the operator's to mend
)

// letterDue reports whether a key's letter may be sent at now: the key active, sealed,
// its letter unclaimed with tries left, and the pause after its last certain failure over.
func letterDue(k Key, now time.Time) bool {
	return k.Status == StatusActive && !k.mailClaimed && k.sealed != "" && k.mailTries < letterTries &&
		!now.Before(k.mailFailedAt.Add(letterPause<<max(k.mailTries-1, 0)))
}

// letterFate is what a send's error makes of its letter, its tries counted: its state,
// and whether its claim goes back so that it is sent again.
func letterFate(err error, tries int64) (string, bool) {
	switch {
	case err == nil:
		return mailSent, false
	case errors.Is(err, mail.ErrRefusedPermanent):
		return mailRefused, false
	case errors.Is(err, providers.ErrNotSent) && tries < letterTries:
		return mailRetry, true
	}
	return mailFailed, false
}

// ensureLetter sends an active key's letter when it is due. It is sent within the request
// that confirmed the payment (the webhook, the test checkout's Pay, or the page's lookup),
// so that a shutdown waits for it as for any request.
func (s *Shop) ensureLetter(ctx context.Context, k Key) {
	if letterDue(k, s.cfg.Now()) {
		s.sendLetter(context.WithoutCancel(ctx), k)
	}
}

// sendLetter mails key k, claimed first in one conditional update that names the tries
// read (of two senders of one try, one sends), and records its fate; it reports whether
// the letter left.
func (s *Shop) sendLetter(ctx context.Context, k Key) bool {
	ctx, cancel := context.WithTimeout(ctx, letterTimeout)
	defer cancel()
	claimedAt := millis(s.cfg.Now())
	won, err := s.keys.db.Changed(ctx, "claiming a credit letter", `UPDATE credit_keys SET mail_claimed_at = ?,
		mail_state = 'sending', mail_tries = mail_tries + 1
		WHERE id = ? AND mail_claimed_at = 0 AND status = 'active' AND mail_tries = ?`, claimedAt, k.ID, k.mailTries)
	if err != nil || !won {
		if err != nil {
			s.log.Error("claiming a credit letter", "credit", k.ID, "err", err)
		}
		return false
	}
	err = s.mail(ctx, k.ID)
	state, again := letterFate(err, k.mailTries+1)
	s.logFate(k.ID, state, k.mailTries+1, err)
	failedAt := millis(k.mailFailedAt)
	if again {
		claimedAt, failedAt = 0, millis(s.cfg.Now())
	}
	if err := s.keys.db.Update(ctx, "recording a credit letter", `UPDATE credit_keys SET mail_state = ?, mail_claimed_at = ?,
		mail_failed_at = ? WHERE id = ?`, state, claimedAt, failedAt, k.ID); err != nil {
		s.log.Error("recording a credit letter", "credit", k.ID, "err", err)
		return false
	}
	s.forget(ctx, k.ID)
	return state == mailSent
}

// logFate logs a letter that did not leave, as its state says.
func (s *Shop) logFate(id, state string, tries int64, err error) {
	switch state {
	case mailRetry:
		s.log.Warn("credit letter certainly not sent; it is sent again later", "credit", id, "try", tries, "err", err)
	case mailRefused:
		s.log.Error("the mail server refused the credit letter for good; the buyer has the key from the confirmation page only",
			"credit", id, "err", err)
	case mailFailed:
		s.log.Error("credit letter not sent, or of unknown fate; not sent again", "credit", id, "tries", tries, "err", err)
	}
}

func (s *Shop) mail(ctx context.Context, id string) error {
	k, err := s.keys.byID(ctx, id)
	if err != nil {
		return err
	}
	secret, err := s.seal.open(ctx, k.ID, k.sealed)
	if err != nil {
		return err
	}
	return s.mailer.Send(ctx, letter(k, secret, s.cfg.PublicURL))
}

// letter is the message that carries a key, in the buyer's language.
func letter(k Key, secret, base string) providers.Message {
	lang := texts.In(k.Locale)
	body := strings.NewReplacer("{key}", secret, "{amount}", texts.FormatAmount(k.Locale, k.Amount, k.Currency),
		"{date}", k.ExpiresAt.Format("2006-01-02"), "{base}", base).Replace(lang.Get("credit.letter.body"))
	return providers.Message{ID: "credit-" + k.ID, To: k.Email, Subject: lang.Get("credit.letter.subject"), Text: body + "\n"}
}

// forget erases a sealed key once it was shown and its letter's fate is known: from then
// on only its hash is kept.
func (s *Shop) forget(ctx context.Context, id string) {
	if err := s.keys.db.Update(ctx, "forgetting a sealed key", `UPDATE credit_keys SET key_sealed = ''
		WHERE id = ? AND shown_at > 0 AND mail_state IN ('sent', 'failed', 'refused')`, id); err != nil {
		s.log.Error("forgetting a sealed key", "credit", id, "err", err)
	}
}

// Reconcile is the reconciler's step for the keys' letters (api/orders' Config.Reconcilers):
// it sends the letters that are due (given back after a send that certainly did not leave,
// or never claimed: a node died between the payment and the send), at most resendBatch a
// pass, then erases the sealed keys no longer needed (forgetStale). It returns how many
// letters it sent.
func (s *Shop) Reconcile(ctx context.Context) (int, error) {
	keys, err := sqldb.QueryAll(ctx, s.keys.db, scanKey, `SELECT `+keyColumns+` FROM credit_keys
		WHERE status = 'active' AND mail_claimed_at = 0 AND key_sealed <> '' AND mail_tries < ?
		ORDER BY mail_failed_at, id LIMIT ?`, letterTries, resendBatch)
	sent := 0
	for _, k := range keys {
		if letterDue(k, s.cfg.Now()) && s.sendLetter(ctx, k) {
			sent++
		}
	}
	return sent, errors.Join(err, s.forgetStale(ctx))
}

// forgetStale erases the sealed keys that outlived their need: shown, with a letter whose
// fate is recorded (forget's rule) or whose claim is older than letterTimeout (its send
// ended long ago, its fate never recorded: its node died in it), and any key not shown
// keepUnshown after its payment. So no key stays sealed for good.
func (s *Shop) forgetStale(ctx context.Context) error {
	now := s.cfg.Now()
	return s.keys.db.Update(ctx, "forgetting stale sealed keys", `UPDATE credit_keys SET key_sealed = ''
		WHERE key_sealed <> '' AND (paid_at <= ? OR shown_at > 0 AND (mail_state IN ('sent', 'failed', 'refused')
		OR mail_state = 'sending' AND mail_claimed_at < ?))`, millis(now.Add(-keepUnshown)), millis(now.Add(-letterTimeout)))
}
