package testkit

import (
	"net/http"
	"testing"
	"time"
)

func TestStartMinIOStopsWithTheTest(t *testing.T) {
	var endpoint string
	t.Run("server", func(t *testing.T) {
		srv := StartMinIO(t)
		endpoint = srv.Endpoint
		if srv.AccessKey == "" || srv.SecretKey == "" {
			t.Fatalf("server without credentials: %+v", srv)
		}
		resp, err := http.Get("http://" + endpoint + "/minio/health/live")
		if err != nil {
			t.Fatalf("health check: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health check = %d, want 200", resp.StatusCode)
		}
	})
	if endpoint == "" {
		return // skipped: minio not installed
	}
	client := http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get("http://" + endpoint + "/minio/health/live"); err == nil {
		resp.Body.Close()
		t.Fatalf("minio still answers on %s after its test ended", endpoint)
	}
}
