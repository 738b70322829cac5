package orders

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// progressRecorder writes an order's progress to the store without blocking the engine:
// it keeps only the latest value and writes at most every 250 ms.
type progressRecorder struct {
	mu      sync.Mutex
	latest  int
	written int
	done    chan struct{}
	stopped sync.WaitGroup
}

// A refused write means the run lost its order: stop is called, and the run ends.
func newProgressRecorder(ctx context.Context, id string, claim int64, fence *fence, stop func(), log *slog.Logger) *progressRecorder {
	p := &progressRecorder{done: make(chan struct{})} // nothing to write until the engine reports
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			p.mu.Lock()
			v := p.latest
			changed := v != p.written
			p.written = v
			p.mu.Unlock()
			if changed {
				ok, err := fence.setProgressFenced(ctx, id, claim, v)
				if err != nil {
					log.Warn("recording progress", "order", id, "err", err)
				} else if !ok {
					log.Warn("progress refused: the order is no longer this run's; stopping it", "order", id)
					stop()
					return
				}
			}
		}
	}()
	return p
}

// set records pct (0–100); progress never goes back.
func (p *progressRecorder) set(pct int) {
	p.mu.Lock()
	p.latest = max(p.latest, pct)
	p.mu.Unlock()
}

func (p *progressRecorder) close() {
	close(p.done)
	p.stopped.Wait()
}
