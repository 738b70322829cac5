package admin

import (
	"bytes"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// view is what every admin page may show.
type view struct {
	Title         string
	Message       string // an error or explanation
	Notice        string // the result of the action just taken
	Closed        bool
	CSRF          string // the session's token; empty for bearer requests
	Once          string // this form's once key
	Search        orders.Search
	Orders        []orderJSON
	Timeline      *timelineJSON
	Audit         []auditJSON
	MaxExtendDays int
	Jobs          bool
	// ClosedServices are the services that take no orders now, and why.
	ClosedServices []closedService
	Keys           []keyJSON // the API's keys (keys.go)
}

// closedService is one closed service as the orders page names it.
type closedService struct {
	Service orders.Service `json:"service"`
	Reason  string         `json:"reason"`
}

// pages are the admin area's templates: English, no script, plain CSS that reads at 320 px.
type pages struct {
	t   *template.Template
	log *slog.Logger
}

func newPages(log *slog.Logger) *pages {
	funcs := template.FuncMap{
		"when": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				if v.IsZero() {
					return "—"
				}
				return v.UTC().Format("2006-01-02 15:04:05 UTC")
			case *time.Time:
				if v == nil {
					return "—"
				}
				return v.UTC().Format("2006-01-02 15:04:05 UTC")
			}
			return ""
		},
		"money": func(cents int64, currency string) string {
			return fmt.Sprintf("%d.%02d %s", cents/100, cents%100, strings.ToUpper(currency))
		},
		"filters":  func() []orders.Filter { return orders.Filters },
		"services": func() []orders.Service { return []orders.Service{orders.TTS, orders.STT, orders.VTT} },
		"serviceName": func(s string) string {
			switch orders.Service(s) {
			case orders.TTS:
				return "text to speech"
			case orders.STT:
				return "audio to text"
			case orders.VTT:
				return "video to text"
			}
			return s
		},
		"minutes": func(seconds int64) string { return fmt.Sprintf("%d:%02d", seconds/60, seconds%60) },
	}
	return &pages{t: template.Must(template.New("admin").Funcs(funcs).Parse(templates)), log: log}
}

func (p *pages) page(c *fiber.Ctx, name string, v view) error {
	var buf bytes.Buffer
	if err := p.t.ExecuteTemplate(&buf, name, v); err != nil {
		p.log.Error("rendering admin page", "page", name, "err", err)
		return c.Status(fiber.StatusInternalServerError).SendString("rendering failed")
	}
	c.Type("html", "utf-8")
	return c.Send(buf.Bytes())
}

// refuse answers an error: JSON to scripts and River's UI, a page to a browser.
func (p *pages) refuse(c *fiber.Ctx, status int, code, message string) error {
	if wantsJSON(c) || strings.HasPrefix(c.Path(), "/admin/jobs") {
		return c.Status(status).JSON(fiber.Map{"ok": false, "error": fiber.Map{"code": code, "message": message}})
	}
	return p.page(c.Status(status), "message", view{Title: http.StatusText(status), Message: message})
}

// failed logs what went wrong and answers 500 without the details.
func (p *pages) failed(c *fiber.Ctx, what string, err error) error {
	p.log.Error(what, "err", err)
	return p.refuse(c, fiber.StatusInternalServerError, "internal", "Something went wrong; see the log.")
}

const templates = `
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}} · Parla admin</title>
<style>
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,sans-serif;color:#1b1b1f;background:#f6f6f8}
a{color:#0b57d0}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:#fff;padding:.3rem .6rem;z-index:2}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;background:#1b1b1f;color:#fff}
header a{color:#fff}header nav{display:flex;flex-wrap:wrap;gap:.8rem;flex:1}
header form{margin:0}
main{padding:1rem;max-width:70rem;margin:0 auto}
h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.4rem 0 .5rem}
.search{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin-bottom:1rem}
.search label,.act label{display:flex;flex-direction:column;font-size:.85rem;gap:.15rem}
input,select,button{font:inherit;padding:.35rem .5rem;border:1px solid #999;border-radius:4px;background:#fff;max-width:100%}
button{background:#0b57d0;color:#fff;border-color:#0b57d0;cursor:pointer}
button.quiet{background:#fff;color:#0b57d0}
.table{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
td code,dd code{word-break:break-all}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;background:#fff;padding:.7rem;margin:0}
dt{font-weight:600}dd{margin:0;min-width:0}
.notice{background:#e7f3e8;border:1px solid #5a9e5f;padding:.5rem .7rem;border-radius:4px}
.error{background:#fdecea;border:1px solid #d9534f;padding:.5rem .7rem;border-radius:4px}
.acts{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.8rem}
.act{background:#fff;border:1px solid #ddd;border-radius:4px;padding:.7rem;display:flex;flex-direction:column;gap:.5rem}
.act p{margin:0;font-size:.9rem;color:#444}
ol.timeline{background:#fff;margin:0;padding:.7rem .7rem .7rem 2rem}
.failed{color:#b3261e}
@media (max-width:30rem){main{padding:.6rem}dl{grid-template-columns:1fr}dt{margin-top:.4rem}}
</style></head><body>
<a class="skip" href="#main">Skip to content</a>
<header><strong>Parla admin</strong>
{{if .CSRF}}<nav aria-label="Admin"><a href="/admin/orders">Orders</a><a href="/admin/audit">Audit log</a><a href="/admin/keys">API keys</a><a href="/admin/jobs/">Jobs</a></nav>
<form method="post" action="/admin/sign-out"><input type="hidden" name="csrf" value="{{.CSRF}}"><button class="quiet" type="submit">Sign out</button></form>{{end}}
</header>
<main id="main">{{end}}

{{define "foot"}}</main></body></html>{{end}}

{{define "message"}}{{template "head" .}}<h1>{{.Title}}</h1>
<p {{if not .Closed}}class="error" role="alert"{{end}}>{{.Message}}</p>
{{if not .Closed}}<p><a href="/admin/orders">Back to the orders</a></p>{{end}}
{{template "foot" .}}{{end}}

{{define "signin"}}{{template "head" .}}<h1>Sign in</h1>
{{if .Message}}<p class="error" role="alert">{{.Message}}</p>{{end}}
<form method="post" action="/admin/sign-in" class="search">
<label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
<button type="submit">Sign in</button>
</form>
{{template "foot" .}}{{end}}

{{define "orders"}}{{template "head" .}}<h1>Orders</h1>
{{if .ClosedServices}}<section class="error" data-testid="closed-services"><h2>Closed services</h2><p>Visitors see these as not offered here; no order can be paid for them.</p>
<ul>{{range .ClosedServices}}<li><strong>{{serviceName (print .Service)}}</strong>: {{.Reason}}</li>{{end}}</ul></section>{{end}}
<form method="get" action="/admin/orders" class="search" role="search">
<label>Order id, session id, payment id or e-mail <input type="search" name="q" value="{{.Search.Query}}" size="32"></label>
<label>Service <select name="service"><option value="">any</option>
{{range services}}<option value="{{.}}"{{if eq . $.Search.Service}} selected{{end}}>{{serviceName (print .)}}</option>{{end}}</select></label>
<label>State <select name="state"><option value="">any</option>
{{range filters}}<option value="{{.}}"{{if eq . $.Search.Filter}} selected{{end}}>{{if eq (print .) "stuck"}}processing too long{{else}}{{.}}{{end}}</option>{{end}}</select></label>
<button type="submit">Search</button>
</form>
{{if .Orders}}<div class="table"><table>
<caption class="skip">Orders found, newest first</caption>
<thead><tr><th scope="col">Order</th><th scope="col">Service</th><th scope="col">State</th><th scope="col">Price</th><th scope="col">Created</th></tr></thead>
<tbody>{{range .Orders}}<tr data-testid="order-row">
<td><a href="/admin/orders/{{.ID}}"><code>{{.ID}}</code></a></td><td>{{serviceName .Service}}</td>
<td>{{.Status}}{{if .Stuck}} <strong class="failed">(too long)</strong>{{end}}{{if .Error}} <span class="failed">{{.Error}}</span>{{end}}</td>
<td>{{money .Amount .Currency}}</td><td>{{when .CreatedAt}}</td></tr>{{end}}</tbody>
</table></div>{{else}}<p>No orders match.</p>{{end}}
{{template "foot" .}}{{end}}

{{define "order"}}{{template "head" .}}{{with .Timeline}}
<h1>Order <code>{{.Order.ID}}</code></h1>
{{if $.Notice}}<p class="notice" role="status" data-testid="notice">{{$.Notice}}</p>{{end}}
<dl>
<dt>Service</dt><dd>{{serviceName .Order.Service}}</dd>
<dt>State</dt><dd data-testid="state">{{.Order.Status}}{{if .Order.Stuck}} (processing longer than expected){{end}}{{if .Order.Error}} — <span class="failed">{{.Order.Error}}</span>{{end}}</dd>
<dt>Price</dt><dd>{{money .Order.Amount .Order.Currency}}</dd>
{{if .Bought.Characters}}<dt>Characters</dt><dd>{{.Bought.Characters}}</dd>{{end}}
{{if .Bought.Seconds}}<dt>Duration</dt><dd>{{minutes .Bought.Seconds}}</dd>{{end}}
{{if .Bought.Format}}<dt>Format</dt><dd>{{.Bought.Format}}{{if .Bought.Voice}}, voice {{.Bought.Voice}}{{end}}{{if .Bought.Translated}}, English translation{{end}}</dd>{{end}}
<dt>Engine</dt><dd>{{if .Engine}}{{.Engine}} (as configured now){{else}}—{{end}}</dd>
<dt>E-mail</dt><dd>{{if .Order.Email}}{{.Order.Email}}{{else}}erased (sent, or never given){{end}}</dd>
<dt>Checkout session</dt><dd><code>{{.Order.SessionID}}</code></dd>
<dt>Payment</dt><dd><code>{{if .Order.PaymentIntent}}{{.Order.PaymentIntent}}{{else}}—{{end}}</code></dd>
<dt>Link expires</dt><dd>{{when .Order.LinkExpiresAt}}</dd>
</dl>
<h2>Timeline</h2>
<ol class="timeline" data-testid="timeline">{{range .Events}}<li><time>{{when .At}}</time> — {{.What}}</li>{{end}}</ol>
<h2>Actions</h2>
<div class="acts">
<form class="act" method="post" action="/admin/orders/{{.Order.ID}}/resend">
<input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="once" value="{{$.Once}}">
<p>Send the delivery e-mail again (delivered orders with a live link).</p>
<label>To <input type="email" name="to" placeholder="{{if .Order.Email}}{{.Order.Email}}{{else}}visitor@example.com{{end}}" autocomplete="off"></label>
<button type="submit">Resend e-mail</button></form>
<form class="act" method="post" action="/admin/orders/{{.Order.ID}}/retry">
<input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="once" value="{{$.Once}}">
<p>Run a failed order again: back to paid, then delivered (not for refunded orders).</p>
<button type="submit">Retry</button></form>
<form class="act" method="post" action="/admin/orders/{{.Order.ID}}/refund">
<input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="once" value="{{$.Once}}">
<p>Return the money through the payment provider (once per order).</p>
<button type="submit">Refund</button></form>
<form class="act" method="post" action="/admin/orders/{{.Order.ID}}/extend">
<input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="once" value="{{$.Once}}">
<p>Make the download link last longer.</p>
<label>Days <input type="number" name="days" min="1" max="{{$.MaxExtendDays}}" value="7" required></label>
<button type="submit">Extend link</button></form>
</div>
{{if .Attempts}}<h2>Job attempts</h2><div class="table"><table><thead><tr><th scope="col">Job</th><th scope="col">Attempt</th><th scope="col">When</th><th scope="col">Error</th></tr></thead>
<tbody>{{range .Attempts}}<tr><td>{{.Job}} #{{.JobID}} ({{.State}})</td><td>{{.Attempt}}</td><td>{{when .At}}</td><td class="failed">{{.Error}}</td></tr>{{end}}</tbody></table></div>{{end}}
<h2>Audit log of this order</h2>
{{template "auditTable" .Audit}}
{{end}}{{template "foot" .}}{{end}}

{{define "keys"}}{{template "head" .}}<h1>API keys</h1>
{{if .Notice}}<p class="notice" role="status" data-testid="notice">Done: {{.Notice}}.</p>{{end}}
<p>Keys are kept as hashes: only their last four characters are shown. Revoking ends a key at once; a refund returns the unused balance (whole cents) through the payment provider and ends the key.</p>
{{if .Keys}}<div class="table"><table data-testid="keys">
<thead><tr><th scope="col">Key</th><th scope="col">State</th><th scope="col">E-mail</th><th scope="col">Paid</th><th scope="col">Left</th><th scope="col">Held</th><th scope="col">Calls</th><th scope="col">Letter</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
<tbody>{{range .Keys}}<tr data-testid="key-row"><td><code>{{if .Key}}{{.Key}}{{else}}—{{end}}</code></td><td>{{.Status}}</td><td>{{.Email}}</td>
<td>{{money .Amount .Currency}}</td><td>{{printf "%.3f" .Balance}} cents</td><td>{{printf "%.3f" .Held}} cents</td><td>{{.Calls}}</td><td>{{if .Letter}}{{.Letter}}{{else}}—{{end}}</td><td>{{when .CreatedAt}}</td><td>{{when .ExpiresAt}}</td>
<td>{{if eq .Status "active"}}<form method="post" action="/admin/keys/{{.ID}}/revoke"><input type="hidden" name="csrf" value="{{$.CSRF}}"><button type="submit">Revoke</button></form>{{end}}
{{if or (eq .Status "active") (eq .Status "revoked")}}<form method="post" action="/admin/keys/{{.ID}}/refund"><input type="hidden" name="csrf" value="{{$.CSRF}}"><button type="submit">Refund</button></form>{{end}}</td></tr>{{end}}</tbody>
</table></div>{{else}}<p>No keys yet.</p>{{end}}
{{template "foot" .}}{{end}}

{{define "audit"}}{{template "head" .}}<h1>Audit log</h1>{{template "auditTable" .Audit}}
{{if .CSRF}}<h2>Sessions</h2>
<form class="act" method="post" action="/admin/sign-out-everyone">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<p>End every operator's session on every node (within 10 seconds), this one's too.
Browsers that signed in before keep their device cookie, which lets them sign in again during a flood of wrong passwords.</p>
<label><input type="checkbox" name="devices" value="1"> Revoke the device cookies too (every browser is then a stranger until it signs in again)</label>
<button type="submit">Sign everyone out</button></form>{{end}}
{{template "foot" .}}{{end}}

{{define "auditTable"}}{{if .}}<div class="table"><table data-testid="audit"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Order</th><th scope="col">Result</th></tr></thead>
<tbody>{{range .}}<tr><td>{{when .At}}</td><td>{{.Actor}} {{.IP}}</td><td>{{.Action}}{{if .Detail}} ({{.Detail}}){{end}}</td>
<td>{{if .OrderID}}<a href="/admin/orders/{{.OrderID}}"><code>{{.OrderID}}</code></a>{{end}}</td><td>{{.Result}}</td></tr>{{end}}</tbody></table></div>{{else}}<p>Nothing yet.</p>{{end}}{{end}}
`
