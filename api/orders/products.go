package orders

import (
	"strconv"
	"strings"

	"parla/providers/texts"
)

// localized returns the product with its name and description in the interface language
// of the order (English for a language without one), from the server's text catalog; the
// TTS description says the number of characters.
func (p product) localized(locale string) product {
	tr := texts.In(locale)
	p.name = tr.Get("product." + string(p.svc) + ".name")
	p.description = strings.ReplaceAll(tr.Get("product."+string(p.svc)+".description"), "{n}", strconv.FormatInt(p.quantity, 10))
	return p
}
