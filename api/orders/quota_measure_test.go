package orders

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
)

// measureGate is lengthInFile whose measure of a file starting "block" waits for proceed.
type measureGate struct {
	lengthInFile
	started, proceed chan struct{}
	measures         atomic.Int64
}

func (g *measureGate) CheckUpload(ctx context.Context, path string, longest time.Duration) (media.Measurement, error) {
	g.measures.Add(1)
	if data, _ := os.ReadFile(path); strings.HasPrefix(string(data), "block") {
		close(g.started)
		<-g.proceed
		return media.Measurement{Length: 10 * time.Second, Speech: 10 * time.Second}, nil
	}
	return g.lengthInFile.CheckUpload(ctx, path, longest)
}

// The quota counts an upload's bytes while it is measured: a second upload from the same
// address that would pass the quota with the first is refused before its own measure.
// Before issue 30 it was measured and kept while the first was still being measured.
func TestQuotaCountsBytesBeingMeasured(t *testing.T) {
	gate := &measureGate{started: make(chan struct{}), proceed: make(chan struct{})}
	f := newFixtureDeps(t, func(c *Config) { c.UploadQuotaPerClient = 30 }, func(d *Deps) { d.Audio = gate })
	const client = "198.51.100.30"
	first := make(chan error, 1)
	go func() {
		_, _, err := f.uploadFrom(t, client, "block"+strings.Repeat(" ", 15))
		first <- err
	}()
	<-gate.started
	if _, _, err := f.uploadFrom(t, client, "10s"+strings.Repeat(" ", 17)); code(err) != "upload_quota" {
		t.Errorf("20 bytes more while 20 are measured, 30 allowed: %v; want upload_quota", err)
	}
	if n := gate.measures.Load(); n != 1 {
		t.Errorf("%d measures; want the second upload refused before its own", n)
	}
	close(gate.proceed)
	if err := <-first; err != nil {
		t.Errorf("the first upload: %v", err)
	}
}

// The quote of an upload and the checkout of its order charge the same amount, at the
// edges of a second: the kept duration keeps what the price needs (milliseconds rounded
// up), where cutting it to milliseconds lost the sample that made the last second.
func TestUploadQuoteAndCheckoutAgreeAtRoundingEdges(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for _, length := range []string{"100.0000625s", "100.0009s", "100.001s", "100s", "1.0000625s", "60.0000625s", "201.0000625s"} {
		t.Run(length, func(t *testing.T) {
			u, quoted, err := f.upload(t, length)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := time.ParseDuration(length)
			if want := max(99, (99*Seconds(d)+99)/100); quoted != want {
				t.Errorf("quoted %d; want max(99, ceil(99 × %d / 100)) = %d", quoted, Seconds(d), want)
			}
			co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
			if err != nil || co.Amount != quoted {
				t.Errorf("checkout %+v, %v; quoted %d", co, err, quoted)
			}
		})
	}
}
