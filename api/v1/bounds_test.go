package v1

import (
	"context"
	"errors"
	"testing"
	"time"

	"parla/api/credit"
	"parla/api/orders"
	"parla/media"
)

// measured is a measure that finds length, and counts its runs.
func measured(length time.Duration, runs *int) func(context.Context) (media.Measurement, error) {
	return func(context.Context) (media.Measurement, error) {
		*runs++
		return media.Measurement{Length: length, Speech: length}, nil
	}
}

// A transcription's measure is bounded before any price is held: a key that cannot pay
// for the cheapest charged file (SpeechFloor's 250 ms, 0.248 c) is refused without a
// measure, a file longer than MaxTranscription is refused naming the limit, a key measures
// at most maxMeasures files at once (another key is not held back), and a measure past
// its deadline is 503 busy.
func TestTranscriptionMeasureIsBounded(t *testing.T) {
	a := New(Config{MaxTranscription: 10 * time.Minute}, Deps{Pricing: orders.DefaultPricing()})
	ctx := context.Background()
	rich, poor := credit.Key{ID: "rich", Balance: 500_000}, credit.Key{ID: "poor", Balance: 247}
	if a.measures.cheapest != 248 {
		t.Fatalf("the cheapest charged file costs %d thousandths of a cent, want 248", a.measures.cheapest)
	}
	runs := 0
	if _, err := a.measures.run(ctx, poor, time.Minute, measured(time.Second, &runs)); !errors.Is(err, credit.ErrInsufficient) || runs != 0 {
		t.Errorf("a key of 0.247 c: %v after %d measures, want insufficient credit before any", err, runs)
	}
	poor.Balance = 248
	if _, err := a.measures.run(ctx, poor, time.Minute, measured(time.Second, &runs)); err != nil || runs != 1 {
		t.Errorf("a key of 0.248 c: %v after %d measures, want measured", err, runs)
	}
	_, err := a.measures.run(ctx, rich, time.Minute, measured(10*time.Minute+time.Second, &runs))
	var ie *orders.InputError
	if !errors.As(err, &ie) || ie.Code != "audio_too_long" || ie.Message != "The file lasts 10m1s; this server transcribes at most 10m0s in one call. Send it in parts." {
		t.Errorf("a file of 10m1s: %v, want audio_too_long naming 10m0s", err)
	}
	if _, err := a.measures.run(ctx, rich, time.Minute, measured(10*time.Minute, &runs)); err != nil {
		t.Errorf("a file of 10m0s: %v", err)
	}

	// maxMeasures measures of one key held running: the next of that key is refused, one of
	// another key is not.
	hold, started := make(chan struct{}), make(chan struct{}, maxMeasures)
	running := func(ctx context.Context) (media.Measurement, error) {
		started <- struct{}{}
		<-hold
		return media.Measurement{Length: time.Second, Speech: time.Second}, nil
	}
	done := make(chan error, maxMeasures)
	for range maxMeasures {
		go func() { _, err := a.measures.run(ctx, rich, time.Minute, running); done <- err }()
		<-started
	}
	if _, err := a.measures.run(ctx, rich, time.Minute, measured(time.Second, &runs)); err != errMeasuring {
		t.Errorf("a third measure of one key: %v, want %v", err, errMeasuring)
	}
	if _, err := a.measures.run(ctx, poor, time.Minute, measured(time.Second, &runs)); err != nil {
		t.Errorf("another key's measure meanwhile: %v", err)
	}
	close(hold)
	for range maxMeasures {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if _, err := a.measures.run(ctx, rich, time.Minute, measured(time.Second, &runs)); err != nil {
		t.Errorf("a measure once the others ended: %v", err)
	}

	// A measure that never ends on its own (a full pool, a stuck decode) ends at its deadline.
	stuck := func(ctx context.Context) (media.Measurement, error) {
		select {
		case <-ctx.Done():
			return media.Measurement{}, ctx.Err()
		case <-time.After(time.Minute):
			return media.Measurement{}, errors.New("not ended by its deadline")
		}
	}
	start := time.Now()
	_, err = a.measures.run(ctx, rich, 100*time.Millisecond, stuck)
	if e := classify(err, "file"); e.status != 503 || e.code != "busy" || time.Since(start) > 30*time.Second {
		t.Errorf("a measure past its deadline: %v after %s, want 503 busy", err, time.Since(start))
	}
}
