package v1

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
	"parla/api/orders"
	"parla/media"
)

// The bounds of a transcription's measure, before its price is held: the file is decoded
// whole to be priced (media.CheckUpload), which costs the server far more than reading the
// request, so a key that cannot pay for any file is refused before it, a key measures at
// most maxMeasures files at once, each measure has a wall-clock deadline, and a file longer
// than Config.MaxTranscription is refused before anything is held.

// DefaultMaxTranscription is the longest file one API transcription takes by default
// (API_MAX_TRANSCRIPTION). A call's work is cut at callTimeout (10 minutes): 30 minutes of
// audio in 10 needs an engine three times faster than real time, which whisper.cpp's base
// model on a few cores and the OpenAI-compatible servers are. A longer file would be cut,
// released and sent again, its engine time free every time; it is refused instead, naming
// the limit, and the client cuts it in parts.
const DefaultMaxTranscription = 30 * time.Minute

// maxMeasures is how many files one key may have measured at once.
const maxMeasures = 2

// measureTimeout is how long the measure of a file of size bytes may take, in wall-clock
// time, waiting for the visitors' pool included: media.MeasureDeadline is CPU time, which
// a decode at the lowest priority on a busy machine takes far longer to use.
func measureTimeout(size int64) time.Duration {
	return time.Minute + 2*media.MeasureDeadline(size)
}

// measureGate counts the measures each key runs.
type measureGate struct {
	mu      sync.Mutex
	running map[string]int
}

// enter takes one of key's maxMeasures places and returns what gives it back, or false
// when they are all taken.
func (g *measureGate) enter(key string) (func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running[key] >= maxMeasures {
		return nil, false
	}
	if g.running == nil {
		g.running = map[string]int{}
	}
	g.running[key]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.running[key]--; g.running[key] == 0 {
			delete(g.running, key)
		}
	}, true
}

var errMeasuring = &apiError{status: 429, typ: "requests", code: "rate_limit_exceeded", hint: retryShortly,
	message: "This key has " + strconv.Itoa(maxMeasures) + " files being measured already; send the next when one is answered."}

// file is a transcription's file measured by intake for its call's key, within the
// bounds; a silent file is measured as the site measures it (MeasureUpload's no_speech).
func (b *measureBounds) file(c *fiber.Ctx, path string, intake *orders.Intake) (media.Measurement, error) {
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	return b.run(c.UserContext(), keyOfCall(c), measureTimeout(size), func(ctx context.Context) (media.Measurement, error) {
		return intake.MeasureUpload(ctx, path)
	})
}

// measureBounds are what every transcription's measure is held to.
type measureBounds struct {
	// cheapest is the least a charged transcription costs, in thousandths of a cent: a
	// file with less than media.SpeechFloor of speech is answered free, so every charged
	// file lasts at least that.
	cheapest int64
	longest  time.Duration // Config.MaxTranscription
	gate     measureGate
}

func newMeasureBounds(stt orders.Rule, longest time.Duration) *measureBounds {
	return &measureBounds{cheapest: stt.MilliAmount(media.SpeechFloor.Milliseconds(), 1000), longest: longest}
}

// run runs measure for key k within timeout: refused first when k's balance cannot pay
// the cheapest file (credit.ErrInsufficient), or while k has maxMeasures running; a
// measure past its deadline is 503 busy; a file longer than longest is refused.
func (b *measureBounds) run(ctx context.Context, k credit.Key, timeout time.Duration,
	measure func(context.Context) (media.Measurement, error)) (media.Measurement, error) {
	if k.Balance < b.cheapest {
		return media.Measurement{}, credit.ErrInsufficient
	}
	leave, ok := b.gate.enter(k.ID)
	if !ok {
		return media.Measurement{}, errMeasuring
	}
	defer leave()
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := measure(mctx)
	switch {
	case err != nil && errors.Is(mctx.Err(), context.DeadlineExceeded):
		return m, errors.Join(media.ErrVisitorsBusy, err)
	case err == nil && m.Length > b.longest:
		return m, &orders.InputError{Code: "audio_too_long", Message: "The file lasts " + m.Length.Round(time.Second).String() +
			"; this server transcribes at most " + b.longest.String() + " in one call. Send it in parts."}
	}
	return m, err
}
