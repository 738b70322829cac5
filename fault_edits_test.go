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
// visitor saves edits at the worst moments (fault): every saved text carries mark, so the
// checker finds any copy of it.
type scheduleEdits struct {
	page string           // the link page, /r/TOKEN
	cues []map[string]any // the original cues, the first one's text replaced by each save
	mark string
	n    atomic.Int32
	wg   sync.WaitGroup
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
	return &scheduleEdits{page: page, cues: tr.Original, mark: fmt.Sprintf("SAVED-%d-", seed)}
}

// save PUTs an edit to node i in the background; its answer does not matter (the node may
// be frozen, killed or the order deleted), only what it leaves behind.
func (fc *faultCluster) save(e *scheduleEdits, i int) { fc.saveAfter(e, i, 0) }

// saveAfter is save, sent after wait.
func (fc *faultCluster) saveAfter(e *scheduleEdits, i int, wait time.Duration) {
	cues := make([]map[string]any, len(e.cues))
	for k, c := range e.cues {
		cues[k] = map[string]any{}
		for f, v := range c {
			cues[k][f] = v
		}
	}
	cues[0]["text"] = fmt.Sprintf("%s%d the visitor's own words", e.mark, e.n.Add(1))
	body, _ := json.Marshal(map[string]any{"cues": cues})
	url := fc.nodes[i].base + e.page + "/transcript"
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		time.Sleep(wait)
		req, _ := http.NewRequest("PUT", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("If-Match", "*") // over whichever save came before: the deletion is what is checked
		for k, v := range sameSite {
			req.Header.Set(k, v)
		}
		if resp, err := saveClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
}

// checkEdits asserts, when the transcript order was deleted, that none of its saved texts
// is anywhere under a node's DATA_DIR or in the bucket, and that its link page is gone.
func (fc *faultCluster) checkEdits(t *testing.T, e *scheduleEdits, deleted bool) {
	t.Helper()
	if !deleted {
		return
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
