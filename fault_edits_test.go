package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// scheduleEdits is a schedule's transcript order, delivered before the fault, whose
// visitor saves edits at the worst moments (fault): every saved text carries mark and the
// save's number, so the checker finds any copy of it and knows which save won. Each save
// sends the version the visitor's page read (If-Match: the GET's ETag, when it answers one).
type scheduleEdits struct {
	page    string           // the link page, /r/TOKEN
	cues    []map[string]any // the original cues, the first one's text replaced by each save
	mark    string
	version string // the ETag of the page's first read
	n       atomic.Int32
	wg      sync.WaitGroup

	mu    sync.Mutex
	saves map[int]*savedEdit // by number
}

// savedEdit is one save: when it was sent and answered, and its answer (0: none came).
type savedEdit struct {
	sent, answered time.Time
	status         int
}

// saveClient waits long: a save sent to a frozen node is answered when it resumes.
var saveClient = &http.Client{Timeout: 3 * time.Minute}

// transcriptToEdit delivers a transcription for the schedule of seed to edit, and clears
// the engine trace its processes left.
func (fc *faultCluster) transcriptToEdit(t *testing.T, seed uint64) *scheduleEdits {
	t.Helper()
	h := fc.at(0)
	_, page := h.deliveredTranscript("en")
	got := h.get(page + "/transcript")
	h.wantStatus(got, 200)
	var tr struct{ Original []map[string]any }
	if err := json.Unmarshal(got.body, &tr); err != nil || len(tr.Original) == 0 {
		t.Fatalf("the transcript to edit: %v %s", err, got.body)
	}
	fc.resetTrace()
	return &scheduleEdits{page: page, cues: tr.Original, mark: fmt.Sprintf("SAVED-%d-", seed),
		version: got.header.Get("ETag"), saves: map[int]*savedEdit{}}
}

// save PUTs an edit to node i in the background (none when the schedule makes no edits),
// from the version the page read; its answer is recorded, not required (the node may be
// frozen, killed or the order deleted): what the saves leave behind is checked.
func (fc *faultCluster) save(e *scheduleEdits, i int) { fc.saveAfter(e, i, 0, e.versionRead()) }

// versionRead is the version the visitor's page read (none without edits).
func (e *scheduleEdits) versionRead() string {
	if e == nil {
		return ""
	}
	return e.version
}

// saveAfter is save, sent after wait with If-Match: version ("*": over whichever save
// came before).
func (fc *faultCluster) saveAfter(e *scheduleEdits, i int, wait time.Duration, version string) {
	if e == nil {
		return
	}
	cues := make([]map[string]any, len(e.cues))
	for k, c := range e.cues {
		cues[k] = map[string]any{}
		for f, v := range c {
			cues[k][f] = v
		}
	}
	n := int(e.n.Add(1))
	cues[0]["text"] = fmt.Sprintf("%s%d the visitor's own words", e.mark, n)
	body, _ := json.Marshal(map[string]any{"cues": cues})
	url := fc.nodes[i].base + e.page + "/transcript"
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		time.Sleep(wait)
		req, _ := http.NewRequest("PUT", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if version != "" {
			req.Header.Set("If-Match", version)
		}
		for k, v := range sameSite {
			req.Header.Set(k, v)
		}
		save := &savedEdit{sent: time.Now()}
		if resp, err := saveClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			save.status = resp.StatusCode
		}
		save.answered = time.Now()
		e.mu.Lock()
		e.saves[n] = save
		e.mu.Unlock()
	}()
}

// checkEdits asserts which save won (savedWon) or, when the transcript order was deleted,
// that none of its saved texts is anywhere under a node's DATA_DIR or in the bucket, and
// that its link page is gone. It returns what it saw, for the schedule's figures.
func (fc *faultCluster) checkEdits(t *testing.T, e *scheduleEdits, deleted bool) string {
	t.Helper()
	if !deleted {
		return fc.savedWon(t, e)
	}
	for i, n := range fc.nodes {
		if left := filesHolding(n.data, e.mark); len(left) != 0 {
			t.Errorf("the deleted order's saved text is on %s's disk: %v", n.id, left)
		}
		if r := fc.at(i).get(e.page); r.status != 404 && r.status != 410 {
			t.Errorf("the deleted transcript's link page answers %d on %s", r.status, n.id)
		}
	}
	if left := fc.objectsHolding(t, e.mark); len(left) != 0 {
		t.Errorf("the deleted order's saved text is in the bucket: %v", left)
	}
	return fmt.Sprintf("%d saves, the order deleted", len(e.saves))
}

// savedWon asserts that no accepted save was lost: the text the link serves is a save's
// that was accepted (or whose answer never came), sent after every other accepted save
// was answered; a save sent before another was accepted could not have seen it, and
// overwrites it only if nothing checks the version it started from (issue 37, hole 10).
func (fc *faultCluster) savedWon(t *testing.T, e *scheduleEdits) string {
	t.Helper()
	if len(e.saves) == 0 {
		return ""
	}
	r := fc.at(0).get(e.page + "/transcript")
	var tr struct{ Edited []struct{ Text string } }
	json.Unmarshal(r.body, &tr)
	won := 0
	if len(tr.Edited) > 0 {
		fmt.Sscanf(strings.TrimPrefix(tr.Edited[0].Text, e.mark), "%d", &won)
	}
	answers := map[int]int{}
	for n, s := range e.saves {
		answers[n] = s.status
	}
	w := e.saves[won]
	switch {
	case won == 0 && r.status == 200:
		for n, s := range e.saves {
			if s.status == 200 {
				t.Errorf("the transcript serves no save, but save %d was accepted (answers %v)", n, answers)
			}
		}
	case w == nil:
		t.Errorf("the transcript serves save %d, which was never sent (answers %v): %d %.200s", won, answers, r.status, r.body)
	case w.status != 200 && w.status != 0:
		t.Errorf("the transcript serves save %d, which was refused %d (answers %v)", won, w.status, answers)
	default:
		for n, s := range e.saves {
			if n != won && s.status == 200 && s.answered.After(w.sent) {
				t.Errorf("save %d (accepted %s after save %d was sent) was lost to it: the link serves save %d (answers %v)",
					n, s.answered.Sub(w.sent).Round(time.Millisecond), won, won, answers)
			}
		}
	}
	return fmt.Sprintf("saves answered %v, save %d served", answers, won)
}

// filesHolding lists the files under dir (hidden ones too) whose bytes contain text.
func filesHolding(dir, text string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(text)) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// objectsHolding lists the objects of the cluster's bucket whose bytes contain text.
func (fc *faultCluster) objectsHolding(t *testing.T, text string) []string {
	t.Helper()
	ctx := context.Background()
	mc, err := minio.New(fc.minio.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(fc.minio.AccessKey, fc.minio.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for obj := range mc.ListObjects(ctx, fc.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		r, err := mc.GetObject(ctx, fc.bucket, obj.Key, minio.GetObjectOptions{})
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if strings.Contains(string(b), text) {
			out = append(out, obj.Key)
		}
	}
	return out
}
