package stripe

import (
	"fmt"
	"html/template"
	"io"

	"parla/providers/texts"
)

// testPage is the built-in checkout's hosted page. It must never be mistaken for a real
// payment page, hence the banner; the forms post back to the session's own URL.
var testPage = template.Must(template.New("test-checkout").Parse(`<!doctype html>
<html lang="{{.Lang}}" dir="{{.Dir}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{call .T "checkout.title"}} — {{.Amount}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1a1a1a; }
.banner { background: #b00020; color: #fff; font-size: 1.4rem; font-weight: 700; text-align: center; padding: 1rem; }
main { max-width: 32rem; margin: 2rem auto; background: #fff; border-radius: .5rem; padding: 1.5rem; box-shadow: 0 1px 3px rgba(0,0,0,.15); }
.amount { font-size: 2rem; font-weight: 700; margin: .5rem 0 1rem; }
.muted { color: #555; }
.actions { display: flex; gap: 1rem; margin-top: 1.5rem; }
button { font-size: 1rem; padding: .7rem 1.4rem; border-radius: .4rem; border: 1px solid #888; background: #fff; cursor: pointer; }
button.pay { background: #0a7d32; border-color: #0a7d32; color: #fff; }
/* An address stays one left-to-right piece, moved whole to the next line when it fits
   there, else cut where the line ends rather than at its hyphen (in Arabic at 320 px it
   broke at the hyphen and the halves swapped places). */
.email { display: inline-block; max-inline-size: 100%; direction: ltr; unicode-bidi: isolate; overflow-wrap: anywhere; word-break: break-all; }
</style>
</head>
<body>
<div class="banner" role="alert">{{call .T "checkout.banner"}}</div>
<main>
  {{if .ImageURL}}<img src="{{.ImageURL}}" alt="" width="64" height="64">{{end}}
  <h1>{{.Name}}</h1>
  {{if .Description}}<p class="muted">{{.Description}}</p>{{end}}
  <p class="amount" data-testid="amount">{{.Amount}}</p>
  {{if .Email}}<p class="muted">{{call .T "checkout.receipt"}} <bdi class="email" dir="ltr" data-testid="email">{{.Email}}</bdi></p>{{end}}
  {{if eq .Status "open"}}
  <p class="muted">{{call .T "checkout.explain"}}</p>
  <p class="muted" data-testid="terms">{{call .T "checkout.terms_pre"}}<a href="/terms" target="_blank" rel="noopener">{{call .T "checkout.terms"}}</a>{{call .T "checkout.terms_and"}}<a href="/refunds" target="_blank" rel="noopener">{{call .T "checkout.refunds"}}</a>{{call .T "checkout.terms_post"}}</p>
  <div class="actions">
    <form method="post" action="{{.PayURL}}"><button class="pay" type="submit">{{call .T "checkout.pay"}} <bdi>{{.Amount}}</bdi></button></form>
    <form method="post" action="{{.CancelURL}}"><button type="submit">{{call .T "checkout.cancel"}}</button></form>
  </div>
  {{else if eq .Status "complete"}}
  <p>{{call .T "checkout.paid"}}</p>
  <p><a href="{{.SuccessURL}}">{{call .T "checkout.continue"}}</a></p>
  {{else if .ClosedEarly}}
  <p data-testid="replaced">{{call .T "checkout.replaced"}}</p>
  <p><a href="{{.BackURL}}">{{call .T "checkout.back"}}</a></p>
  {{else}}
  <p>{{call .T "checkout.expired"}}</p>
  <p><a href="{{.BackURL}}">{{call .T "checkout.back"}}</a></p>
  {{end}}
</main>
</body>
</html>
`))

// RenderPage writes the test checkout page for s: the amount, a banner saying that no
// real card is charged, and Pay and Cancel forms posting to {s.URL}/pay and {s.URL}/cancel
// (a paid or expired session gets a link onwards instead, and one a newer checkout
// replaced says so).
func RenderPage(w io.Writer, s TestSession) error {
	tr := texts.In(s.Locale) // the order's interface language; an unknown one gets English
	data := struct {
		Name, Description, ImageURL, Email, Status string
		ClosedEarly                                bool
		Amount                                     string
		PayURL, CancelURL, SuccessURL, BackURL     string
		Lang, Dir                                  string                  // html lang and dir
		T                                          func(key string) string // the page's texts
	}{
		Name: s.Name, Description: s.Description, ImageURL: s.ImageURL, Email: s.Email,
		Status:      s.Status,
		ClosedEarly: s.ClosedEarly,
		Lang:        tr.Tag(),
		Dir:         tr.Dir(),
		T:           tr.Get,
		Amount:      texts.FormatAmount(tr.Code(), s.Amount, s.Currency),
		PayURL:      s.URL + "/pay",
		CancelURL:   s.URL + "/cancel",
		SuccessURL:  s.SuccessURL,
		BackURL:     s.CancelURL,
	}
	if err := testPage.Execute(w, data); err != nil {
		return fmt.Errorf("rendering test checkout page for %s: %w", s.ID, err)
	}
	return nil
}
