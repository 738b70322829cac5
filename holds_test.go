package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"parla/providers/testkit"
)

// A process killed in the middle of an API call leaves the call's price held; after the
// restart the reconciler gives it back (its holder, the dead process, is not live) within
// 60 s, and the key can then be revoked and refunded. Before, the hold stayed until the same
// key's next call, two hours later, and a revoked key never calls again: its refund answered
// 409 "no call running" for good. Black-box: the server runs as its own process, killed -9.
func TestAKilledProcesssHoldIsGivenBackAfterItsRestart(t *testing.T) {
	requireMediaTools(t)
	fake := startFakeOpenAI(t)
	fake.delay.Store(int64(10 * time.Minute)) // the engine answers long after the kill
	env := fake.env()
	env["DATA_DIR"], env["ADMIN_TOKEN"], env["RECONCILE_INTERVAL"] = t.TempDir(), e2eAdminToken, "2s"
	base, cmd := startProcess(t, "", env)
	key := buyCreditFrom(t, base, 500)

	clip := paddedMP3(t, 20)
	body, ctype := transcriptionForm(t, clip, "model", "whisper-1")
	go func() { // answered never: the process is killed under it
		req, _ := http.NewRequest("POST", base+"/v1/audio/transcriptions", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+key)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	testkit.Eventually(t, 30*time.Second, func() bool { return callState(t, base, key) == "held" }, "the call held")
	cmd.Process.Kill()
	cmd.Wait()

	base, _ = startProcess(t, "", env)
	restarted := time.Now()
	testkit.Eventually(t, 60*time.Second, func() bool { return callState(t, base, key) == "released" },
		"the dead process's hold given back within 60 s of the restart")
	t.Logf("the hold was given back %s after the restart", time.Since(restarted).Round(100*time.Millisecond))
	var credit struct{ Balance float64 }
	getJSON(t, base+"/v1/credit", key, &credit)
	if math.Abs(credit.Balance-500) > 0.0005 {
		t.Errorf("balance %.3f after the hold was given back, want 500", credit.Balance)
	}

	var list struct{ Keys []struct{ ID string } }
	getJSON(t, base+"/admin/keys", e2eAdminToken, &list)
	if len(list.Keys) != 1 {
		t.Fatalf("admin keys: %+v", list)
	}
	for _, action := range []string{"revoke", "refund"} {
		req, _ := http.NewRequest("POST", base+"/admin/keys/"+list.Keys[0].ID+"/"+action, nil)
		req.Header.Set("Authorization", "Bearer "+e2eAdminToken)
		req.Header.Set("Accept", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s the key after the restart: %d %s", action, res.StatusCode, out)
		}
	}
}

// buyCreditFrom buys amount cents of API credit through a server's built-in test checkout
// and returns the key.
func buyCreditFrom(t *testing.T, base string, amount int64) string {
	t.Helper()
	_, co := postJSON(t, base+"/payment/credit/create-checkout-session",
		`{"order":{"amount":`+jsonNumber(amount)+`,"email":"held@example.com","emailVerify":"held@example.com","locale":"en"}}`)
	sessionID, _ := co["sessionId"].(string)
	if sessionID == "" {
		t.Fatalf("checkout: %v", co)
	}
	postJSON(t, base+"/checkout/test/"+sessionID+"/pay", "")
	var key string
	testkit.Eventually(t, 10*time.Second, func() bool {
		status, r := postJSON(t, base+"/services/credit", `{"sessionId":"`+sessionID+`"}`)
		if data, ok := r["data"].(map[string]any); status == 200 && ok {
			key, _ = data["key"].(string)
		}
		return key != ""
	}, "the key shown")
	return key
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// callState is the state of the key's newest call, as GET /v1/credit lists it.
func callState(t *testing.T, base, key string) string {
	var credit struct{ Calls []struct{ Status string } }
	getJSON(t, base+"/v1/credit", key, &credit)
	if len(credit.Calls) == 0 {
		return ""
	}
	return credit.Calls[0].Status
}

// getJSON decodes a GET answered 200 with a bearer token.
func getJSON(t *testing.T, url, token string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
}
