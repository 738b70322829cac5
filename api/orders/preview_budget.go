package orders

import (
	"sync"
	"time"
)

// previewWindow is the window a client's preview budget counts over.
const previewWindow = time.Hour

// previewClients bounds the clients a node remembers: past it, the client that previewed
// least recently is forgotten (a flood of addresses forgets its own, each still bounded).
const previewClients = 100_000

// previewBudget is how much audio each client (ClientKey: an IPv6 /64 as one) may have
// previewed in the last hour on this node: PREVIEW_SECONDS_PER_HOUR. A preview counts
// the seconds it hears when it starts; one answered from an earlier result counts nothing.
type previewBudget struct {
	perHour time.Duration // 0: no bound
	now     func() time.Time

	mu      sync.Mutex
	charges map[string][]previewCharge
}

// previewCharge is one preview's seconds, when they were counted.
type previewCharge struct {
	at     time.Time
	length time.Duration
}

// PreviewBudgetError refuses a preview once its client's budget is spent: Wait is how
// long until enough of it is free again.
type PreviewBudgetError struct {
	Wait time.Duration
}

func (e *PreviewBudgetError) Error() string {
	return "this address has had its free previews for this hour; they are free again in " + e.Wait.Round(time.Second).String()
}

// take counts length against client's budget, or refuses it with a *PreviewBudgetError.
func (b *previewBudget) take(client string, length time.Duration) error {
	if b.perHour <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.charges == nil {
		b.charges = map[string][]previewCharge{}
	}
	kept := recentCharges(b.charges[client], now)
	if wait, ok := budgetWait(kept, length, b.perHour, now); !ok {
		b.charges[client] = kept // not empty: something in it keeps the budget spent
		return &PreviewBudgetError{Wait: wait}
	}
	if _, known := b.charges[client]; !known && len(b.charges) >= previewClients {
		b.forgetOldest()
	}
	b.charges[client] = append(kept, previewCharge{at: now, length: length})
	return nil
}

// giveBack undoes a charge of length for client (a preview that failed on our side).
func (b *previewBudget) giveBack(client string, length time.Duration) {
	if b.perHour <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.charges[client]
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].length == length {
			if c = append(c[:i:i], c[i+1:]...); len(c) == 0 {
				delete(b.charges, client)
			} else {
				b.charges[client] = c
			}
			return
		}
	}
}

// forgetOldest drops the client whose last preview is the oldest.
func (b *previewBudget) forgetOldest() {
	var oldest string
	var at time.Time
	for client, c := range b.charges {
		if len(c) == 0 {
			delete(b.charges, client)
			return
		}
		if last := c[len(c)-1].at; oldest == "" || last.Before(at) {
			oldest, at = client, last
		}
	}
	delete(b.charges, oldest)
}

// recentCharges keeps the charges still inside the window at now.
func recentCharges(c []previewCharge, now time.Time) []previewCharge {
	i := 0
	for i < len(c) && !now.Before(c[i].at.Add(previewWindow)) {
		i++
	}
	return c[i:]
}

// budgetWait says whether length more fits perHour beside the recent charges, and when
// not, how long until the oldest charges leave the window and it does.
func budgetWait(recent []previewCharge, length, perHour time.Duration, now time.Time) (time.Duration, bool) {
	// A preview longer than the whole budget fits an empty one.
	length = min(length, perHour)
	var spent time.Duration
	for _, c := range recent {
		spent += c.length
	}
	if spent+length <= perHour {
		return 0, true
	}
	for _, c := range recent {
		spent -= c.length
		if spent+length <= perHour {
			return c.at.Add(previewWindow).Sub(now), false
		}
	}
	return previewWindow, false
}
