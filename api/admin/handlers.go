package admin

import (
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// orderJSON is an order as the admin area shows it to scripts.
type orderJSON struct {
	ID            string     `json:"id"`
	Service       string     `json:"service"`
	Status        string     `json:"status"`
	Stuck         bool       `json:"stuck"`
	Amount        int64      `json:"amount"`
	Currency      string     `json:"currency"`
	Email         string     `json:"email,omitempty"` // only while the order keeps it
	SessionID     string     `json:"sessionId"`
	PaymentIntent string     `json:"paymentIntent"`
	Error         string     `json:"error,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	PaidAt        *time.Time `json:"paidAt,omitempty"`
	MailedAt      *time.Time `json:"mailedAt,omitempty"`
	DoneAt        *time.Time `json:"doneAt,omitempty"`
	LinkExpiresAt *time.Time `json:"linkExpiresAt,omitempty"`
}

func opt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (a *Admin) orderOut(o orders.Order) orderJSON {
	stuck := o.Status == orders.Processing && !o.PaidAt.IsZero() && a.cfg.Now().Sub(o.PaidAt) > a.op.JobTimeout()
	return orderJSON{ID: o.ID, Service: string(o.Service), Status: string(o.Status), Stuck: stuck, Amount: o.Amount,
		Currency: o.Currency, Email: o.Email, SessionID: o.SessionID, PaymentIntent: o.PaymentIntent, Error: o.Error,
		CreatedAt: o.CreatedAt, PaidAt: opt(o.PaidAt), MailedAt: opt(o.MailedAt), DoneAt: opt(o.DoneAt),
		LinkExpiresAt: opt(o.LinkExpiresAt)}
}

func (a *Admin) orderList(c *fiber.Ctx) error {
	s := orders.Search{Query: c.Query("q"), Service: orders.Service(c.Query("service")), Filter: orders.Filter(c.Query("state"))}
	if s.Service != "" && !s.Service.Valid() {
		return a.pages.refuse(c, fiber.StatusBadRequest, "bad_request", "Unknown service: choose tts, sst or vtt.")
	}
	if s.Filter != orders.FilterAll && !validFilter(s.Filter) {
		return a.pages.refuse(c, fiber.StatusBadRequest, "bad_request", "Unknown state: choose waiting, stuck, failed, refunded or delivered.")
	}
	found, err := a.op.Search(c.UserContext(), s)
	if err != nil {
		return a.orderError(c, err)
	}
	out := make([]orderJSON, 0, len(found))
	for _, o := range found {
		out = append(out, a.orderOut(o))
	}
	closed := a.closedServices()
	if wantsJSON(c) {
		return c.JSON(fiber.Map{"orders": out, "closed": closed})
	}
	return a.pages.page(c, "orders", view{Title: "Orders", Search: s, Orders: out, CSRF: a.door.csrfOf(c), ClosedServices: closed})
}

// closedServices lists the closed services in the site's order, with why.
func (a *Admin) closedServices() []closedService {
	out := []closedService{}
	if a.cfg.Closed == nil {
		return out
	}
	why := a.cfg.Closed()
	for _, svc := range []orders.Service{orders.TTS, orders.STT, orders.VTT} {
		if reason, ok := why[svc]; ok {
			out = append(out, closedService{Service: svc, Reason: reason})
		}
	}
	return out
}

func validFilter(f orders.Filter) bool {
	for _, g := range orders.Filters {
		if g == f {
			return true
		}
	}
	return false
}

// timelineJSON is an order's page for scripts.
type timelineJSON struct {
	Order    orderJSON     `json:"order"`
	Engine   string        `json:"engine"`
	Bought   boughtJSON    `json:"bought"`
	Events   []eventJSON   `json:"events"`
	Attempts []attemptJSON `json:"attempts"`
	Audit    []auditJSON   `json:"audit"`
}

type boughtJSON struct {
	Format     string `json:"format,omitempty"`
	Voice      string `json:"voice,omitempty"`
	Characters int64  `json:"characters,omitempty"`
	Seconds    int64  `json:"seconds,omitempty"`
	Translated bool   `json:"translated,omitempty"`
}

type eventJSON struct {
	At   *time.Time `json:"at,omitempty"`
	What string     `json:"what"`
}

type attemptJSON struct {
	Job     string    `json:"job"`
	JobID   int64     `json:"jobId"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Error   string    `json:"error,omitempty"`
	State   string    `json:"state"`
}

type auditJSON struct {
	Actor   string    `json:"actor"`
	IP      string    `json:"ip"`
	Action  string    `json:"action"`
	OrderID string    `json:"orderId,omitempty"`
	Detail  string    `json:"detail,omitempty"`
	Result  string    `json:"result"`
	At      time.Time `json:"at"`
}

func auditOut(entries []orders.AuditEntry) []auditJSON {
	out := make([]auditJSON, 0, len(entries))
	for _, e := range entries {
		out = append(out, auditJSON{Actor: e.Actor, IP: e.IP, Action: e.Action, OrderID: e.OrderID, Detail: e.Detail, Result: e.Result, At: e.At})
	}
	return out
}

func (a *Admin) orderPage(c *fiber.Ctx) error {
	t, err := a.op.Timeline(c.UserContext(), c.Params("id"))
	if err != nil {
		return a.orderError(c, err)
	}
	out := timelineJSON{Order: a.orderOut(t.Order), Engine: a.cfg.Engines[t.Order.Service],
		Bought: boughtJSON{Format: t.Bought.Format, Voice: t.Bought.Voice, Characters: t.Bought.Characters,
			Seconds: t.Bought.Seconds, Translated: t.Bought.Translated},
		Events: []eventJSON{}, Attempts: []attemptJSON{}, Audit: auditOut(t.Audit)}
	for _, e := range t.Events {
		out.Events = append(out.Events, eventJSON{At: opt(e.At), What: e.What})
	}
	for _, at := range t.Attempts {
		out.Attempts = append(out.Attempts, attemptJSON{Job: at.Job, JobID: at.JobID, Attempt: at.Attempt, At: at.At, Error: at.Error, State: at.State})
	}
	if wantsJSON(c) {
		return c.JSON(out)
	}
	v := view{Title: "Order " + t.Order.ID, Timeline: &out, CSRF: a.door.csrfOf(c), Once: randomToken(),
		MaxExtendDays: orders.MaxExtendDays, Jobs: a.cfg.Jobs != nil}
	if c.Query("did") != "" && len(out.Audit) > 0 {
		v.Notice = out.Audit[0].Action + " — " + out.Audit[0].Result
	}
	return a.pages.page(c, "order", v)
}

// action runs one operator action. The form's once key makes a second click a no-op that
// answers the first result; scripts may send an Idempotency-Key header for the same.
func (a *Admin) action(c *fiber.Ctx) error {
	id, name := c.Params("id"), c.Params("action")
	by := orders.Actor{Who: current(c).Who, IP: a.cfg.ClientIP(c), Once: c.FormValue("once")}
	if by.Once == "" {
		by.Once = c.Get("Idempotency-Key")
	}
	if len(by.Once) > 100 {
		return a.pages.refuse(c, fiber.StatusBadRequest, "bad_request", "The once key is too long.")
	}
	ctx := c.UserContext()
	var out orders.Outcome
	var err error
	switch name {
	case "resend":
		out, err = a.op.Resend(ctx, by, id, c.FormValue("to"))
	case "retry":
		out, err = a.op.Retry(ctx, by, id)
	case "refund":
		out, err = a.op.Refund(ctx, by, id)
	case "extend":
		days, convErr := strconv.Atoi(c.FormValue("days"))
		if convErr != nil {
			days = 0 // refused, and audited, by the operator side
		}
		out, err = a.op.Extend(ctx, by, id, days)
	default:
		return a.pages.refuse(c, fiber.StatusNotFound, "not_found", "No such action.")
	}
	status := fiber.StatusOK
	var refused *orders.RefusedError
	switch {
	case errors.As(err, &refused):
		status = fiber.StatusConflict
	case errors.Is(err, orders.ErrNotFound):
		return a.orderError(c, err)
	case err != nil:
		a.cfg.Log.Error("admin action failed", "action", name, "order", id, "err", err)
		status = fiber.StatusInternalServerError
	}
	if wantsJSON(c) {
		return outcome(c, status, out, err)
	}
	return c.Redirect("/admin/orders/"+id+"?did="+name, fiber.StatusSeeOther)
}

// outcome answers an action's result to a script.
func outcome(c *fiber.Ctx, status int, out orders.Outcome, err error) error {
	return c.Status(status).JSON(fiber.Map{"ok": err == nil, "action": out.Action, "result": out.Result, "repeated": out.Repeated})
}

func (a *Admin) auditPage(c *fiber.Ctx) error {
	entries, err := a.op.Audit(c.UserContext(), "", 200)
	if err != nil {
		return a.orderError(c, err)
	}
	if wantsJSON(c) {
		return c.JSON(fiber.Map{"audit": auditOut(entries)})
	}
	return a.pages.page(c, "audit", view{Title: "Audit log", Audit: auditOut(entries), CSRF: a.door.csrfOf(c)})
}
