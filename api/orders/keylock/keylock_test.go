package keylock

import (
	"sync"
	"testing"
	"time"
)

func TestLockSerialisesOneKeyAndForgetsIt(t *testing.T) {
	var k Locks
	var mu sync.Mutex
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			defer k.Lock("a")()
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders of one key at once, want 1", most)
	}
	if n := k.Len(); n != 0 {
		t.Errorf("%d keys kept after every holder left, want 0", n)
	}
}

func TestLockLetsOtherKeysRun(t *testing.T) {
	var k Locks
	unlock := k.Lock("a")
	done := make(chan struct{})
	go func() { k.Lock("b")(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("key b waited for key a")
	}
	unlock()
}
