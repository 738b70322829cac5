package orders

import (
	"parla/providers"
	"parla/providers/mail"
)

// MailLetters writes the visitor's messages with the mail package's localized templates.
type MailLetters struct{}

// Delivered is the message with the download link.
func (MailLetters) Delivered(o Order, link string) (providers.Message, error) {
	return mail.Render(mail.Delivered, o.Locale, mail.Data{Service: mail.Service(o.Service),
		Link: link, ExpiresAt: o.LinkExpiresAt, OrderRef: o.ID})
}

// Refunded tells the visitor the order could not be produced and was refunded.
func (MailLetters) Refunded(o Order) (providers.Message, error) {
	return mail.Render(mail.Refunded, o.Locale, mail.Data{Service: mail.Service(o.Service), OrderRef: o.ID, Reason: o.Error})
}
