package orders

import (
	"context"
	"sync"
	"time"
)

// hold counts size bytes of client's in the quotas while the upload is measured (a measure
// may take seconds, and uploads arriving meanwhile must see these bytes), or refuses it
// as fits would. release ends the hold (safe to call more than once); keep then reserves
// the bytes again, checking the quotas once more, so nothing passes them in between.
func (u *Uploads) hold(ctx context.Context, client string, size int64) (release func(), err error) {
	settle, err := u.reserve(ctx, client, size)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { settle(nil) }) }, nil
}

// keptMillis is an upload's duration as the uploads table keeps it, in milliseconds
// rounded up: whole seconds rounded up (Seconds, what the price counts) come out the same
// from it as from the measure itself, so the checkout charges what the upload was quoted.
// Cut to milliseconds, 100.0000625 s was quoted for 101 s and charged for 100.
func keptMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
