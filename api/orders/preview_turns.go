package orders

import (
	"context"
	"errors"
	"sync"

	"parla/providers"
)

// EngineTurns puts a node's free transcription previews after its paid work: a preview
// starts only while no paid transcription runs on this node (an order's, or the API's),
// one preview at a time, and a paid transcription that starts while a preview runs
// cancels it (errPreempted): the preview waits its turn again and runs once the paid work
// is over. So paid work never waits for more than a preview takes to stop: at once
// between its steps, at the end of a 30-second window inside whisper.cpp.
type EngineTurns struct {
	mu   sync.Mutex
	paid int
	// idle is closed while no paid work runs; a new one is made when paid work starts.
	idle chan struct{}
	// slot holds the one preview that may run; stop cancels it.
	slot chan struct{}
	stop context.CancelCauseFunc
}

// errPreempted cancels a preview when paid work starts beside it.
var errPreempted = errors.New("paid work started: the preview waits its turn again")

// NewEngineTurns returns the turns of one node's speech-to-text engine.
func NewEngineTurns() *EngineTurns {
	idle := make(chan struct{})
	close(idle)
	return &EngineTurns{idle: idle, slot: make(chan struct{}, 1)}
}

// Paid wraps a transcription engine whose every call is paid work: the order book's
// producer and the API's transcriptions.
func (t *EngineTurns) Paid(e providers.Transcriber) providers.Transcriber {
	return paidEngine{Transcriber: e, turns: t}
}

type paidEngine struct {
	providers.Transcriber
	turns *EngineTurns
}

func (p paidEngine) Transcribe(ctx context.Context, req providers.TranscribeRequest) (providers.Transcript, error) {
	defer p.turns.paidStarted()()
	return p.Transcriber.Transcribe(ctx, req)
}

// paidStarted counts a paid transcription, cancels a running preview, and returns what
// counts it done.
func (t *EngineTurns) paidStarted() (done func()) {
	t.mu.Lock()
	if t.paid == 0 {
		t.idle = make(chan struct{})
	}
	t.paid++
	if t.stop != nil {
		t.stop(errPreempted)
	}
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.paid--; t.paid == 0 {
				close(t.idle)
			}
		})
	}
}

// previewTurn waits, until wait ends, for this preview's turn (the preview slot is free
// and no paid work runs), then returns a context of run's that is cancelled with
// errPreempted when paid work starts, and what ends the turn.
func (t *EngineTurns) previewTurn(wait, run context.Context) (context.Context, func(), error) {
	select {
	case t.slot <- struct{}{}:
	case <-wait.Done():
		return nil, nil, wait.Err()
	}
	for {
		t.mu.Lock()
		idle, busy := t.idle, t.paid > 0
		if !busy {
			turn, cancel := context.WithCancelCause(run)
			t.stop = cancel
			t.mu.Unlock()
			var once sync.Once
			return turn, func() {
				once.Do(func() {
					t.mu.Lock()
					t.stop = nil
					t.mu.Unlock()
					cancel(nil)
					<-t.slot
				})
			}, nil
		}
		t.mu.Unlock()
		select {
		case <-idle:
		case <-wait.Done():
			<-t.slot
			return nil, nil, wait.Err()
		}
	}
}

// preempted reports a preview's run cancelled by paid work.
func preempted(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errPreempted)
}
