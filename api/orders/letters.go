package orders

import (
	"strings"

	"parla/providers"
	"parla/providers/mail"
)

// MailLetters writes the visitor's messages with the mail package's localized templates.
type MailLetters struct{}

// Delivered is the message with the download link; a transcription's says whether it is
// a transcript or an English translation.
func (MailLetters) Delivered(o Order, link string) (providers.Message, error) {
	return mail.Render(mail.Delivered, o.Locale, mail.Data{Service: o.Service,
		Link: link, ExpiresAt: o.LinkExpiresAt, OrderRef: o.ID, Translated: Translated(o), Purchase: purchase(o)})
}

// Translated reports whether a transcription order asked for an English translation: its
// parameters say so until it is done, and its result's name (parla-translation-…) after,
// when the parameters are erased.
func Translated(o Order) bool {
	if o.Service == TTS {
		return false
	}
	if strings.HasPrefix(o.ResultName, "parla-translation-") {
		return true
	}
	p, err := decodeTranscriptParams(o.Params)
	return err == nil && p.Translate
}

// Refunded tells the visitor the order could not be produced and was refunded.
func (MailLetters) Refunded(o Order) (providers.Message, error) {
	p := purchase(o)
	if o.Error == "amount_mismatch" {
		p.Currency = "" // what was paid is not the order's price: the letter names no amount
	}
	return mail.Render(mail.Refunded, o.Locale, mail.Data{Service: o.Service, OrderRef: o.ID, Reason: o.Error,
		Purchase: p})
}

// purchase is the receipt of an order, read from its parameters (present until it is
// done or refunded, when its letters are written).
func purchase(o Order) mail.Purchase {
	k := keptOf(o, nil)
	return mail.Purchase{Format: k.Format, Voice: k.Voice, Characters: k.Characters, Seconds: k.Seconds,
		Amount: o.Amount, Currency: o.Currency}
}
