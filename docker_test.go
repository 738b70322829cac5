package main

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.yaml.in/yaml/v3"

	"parla/api/metrics"
	"parla/api/orders"
	"parla/providers/testkit"
)

// The alert rules and Prometheus' configuration are what promtool accepts, and the alerts
// fire as docker/prometheus/alerts_test.yml says (promtool from Debian's prometheus
// package; missing, the test skips, and fails in CI).
func TestPrometheusRulesAndConfig(t *testing.T) {
	promtool := testkit.Binary(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "docker/prometheus/alerts.yml"},
		{"check", "config", "docker/prometheus/prometheus.yml"},
		{"test", "rules", "docker/prometheus/alerts_test.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// exportedFamilies are the names of every family the app serves, each kind of event
// observed once so that every labelled family has a series.
func exportedFamilies(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(metrics.Config{DataDir: t.TempDir(), Gauges: emptyGauges{}, Engines: map[orders.Service]string{orders.TTS: "espeak"}})
	for _, k := range []orders.EventKind{orders.EventCreated, orders.EventPaid, orders.EventProduced, orders.EventDelivered,
		orders.EventFailed, orders.EventRefunded, orders.EventMailed, orders.EventUpload} {
		m.Observe(orders.Event{Kind: k, Service: orders.TTS, Amount: 1, Currency: "eur", Reason: "x", Took: time.Second, Audio: time.Second, Bytes: 1})
	}
	m.Observe(orders.Event{Kind: orders.EventMailed, Service: orders.TTS, Reason: "delivered", Err: errors.New("refused")})
	m.Observe(orders.Event{Kind: orders.EventProduced, Service: orders.TTS, Took: time.Second, Audio: time.Second})
	app := fiber.New()
	app.Use(m.Middleware())
	app.Get("/", func(c *fiber.Ctx) error { return nil })
	if _, err := app.Test(httptest.NewRequest("GET", "/", nil)); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	f := scrapeMetrics(t, reply{status: rec.Code, body: rec.Body.Bytes()})
	names := map[string]bool{}
	for name, mf := range f {
		names[name] = true
		if mf.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		}
	}
	return names
}

type emptyGauges struct{}

func (emptyGauges) Gauges(ctx context.Context) (orders.Gauges, error) { return orders.Gauges{}, nil }

// Every series the alerts and the dashboard ask for is one the app serves.
func TestAlertsAndDashboardUseServedMetrics(t *testing.T) {
	served := exportedFamilies(t)
	name := regexp.MustCompile(`\bparla_[a-z_]+`)
	for _, file := range []string{"docker/prometheus/alerts.yml", "docker/grafana/dashboards/parla.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		used := name.FindAllString(string(data), -1)
		if len(used) < 5 {
			t.Errorf("%s names only %v", file, used)
		}
		for _, n := range used {
			if !served[n] {
				t.Errorf("%s uses %s, which the app does not serve", file, n)
			}
		}
	}
}

type composeFile struct {
	Name     string
	Services map[string]struct {
		Image       string
		Profiles    []string
		Ports       []string
		Environment map[string]string
		Volumes     []string
		Deploy      struct{ Replicas int }
		Healthcheck struct{ Test []string }
	}
}

// compose.yaml starts what the README says, with health checks through the binary, and
// passes the app only settings config.go reads; the Caddyfile balances exactly the
// scaled profile's replicas and asks /readyz.
func TestComposeFile(t *testing.T) {
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, s := range []string{"app", "node", "caddy", "postgres", "minio", "mailpit", "prometheus", "grafana"} {
		if _, ok := c.Services[s]; !ok {
			t.Errorf("compose.yaml has no service %q", s)
		}
	}
	configSrc, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	healthcheck := []string{"CMD", "/usr/local/bin/parla", "healthcheck"}
	for _, name := range []string{"app", "node"} {
		s := c.Services[name]
		if !slices.Equal(s.Healthcheck.Test, healthcheck) {
			t.Errorf("%s health check = %v, want %v", name, s.Healthcheck.Test, healthcheck)
		}
		for k := range s.Environment {
			if !strings.Contains(string(configSrc), `"`+k+`"`) {
				t.Errorf("%s passes %s, which config.go does not read", name, k)
			}
		}
		env := s.Environment
		if env["STORAGE"] != "minio" || !strings.HasPrefix(env["SMTP_URL"], "smtp://mailpit:") {
			t.Errorf("%s: STORAGE=%q SMTP_URL=%q", name, env["STORAGE"], env["SMTP_URL"])
		}
		if _, port, err := net.SplitHostPort(env["METRICS_ADDR"]); err != nil || port != "9090" {
			t.Errorf("%s: METRICS_ADDR=%q, want :9090 (prometheus.yml scrapes it)", name, env["METRICS_ADDR"])
		}
	}
	node := c.Services["node"]
	if node.Deploy.Replicas < 2 || !slices.Contains(node.Profiles, "scaled") ||
		!strings.HasPrefix(node.Environment["DATABASE_URL"], "postgres://") {
		t.Errorf("node: replicas %d, profiles %v, DATABASE_URL %q", node.Deploy.Replicas, node.Profiles, node.Environment["DATABASE_URL"])
	}
	for _, s := range []string{"postgres", "minio"} {
		if len(c.Services[s].Healthcheck.Test) == 0 {
			t.Errorf("%s has no health check", s)
		}
	}
	for _, s := range []string{"caddy", "postgres"} {
		if !slices.Contains(c.Services[s].Profiles, "scaled") {
			t.Errorf("%s is not in the scaled profile", s)
		}
	}
	if !strings.HasPrefix(c.Services["caddy"].Image, "caddy:") {
		t.Errorf("caddy image %q: the official one", c.Services["caddy"].Image)
	}
	for _, s := range []string{"prometheus", "grafana", "caddy"} {
		for _, v := range c.Services[s].Volumes {
			if src, _, _ := strings.Cut(v, ":"); strings.HasPrefix(src, "./") {
				if _, err := os.Stat(src); err != nil {
					t.Errorf("%s mounts %s: %v", s, src, err)
				}
			}
		}
	}

	caddy, err := os.ReadFile("docker/caddy/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	upstreams := regexp.MustCompile(`\b`+c.Name+`-node-(\d+):8080\b`).FindAllStringSubmatch(string(caddy), -1)
	var got []string
	for _, u := range upstreams {
		got = append(got, u[1])
	}
	var want []string
	for i := 1; i <= node.Deploy.Replicas; i++ {
		want = append(want, strconv.Itoa(i))
	}
	if c.Name == "" || !slices.Equal(got, want) {
		t.Errorf("Caddyfile balances %s-node-%v, want the %d replicas", c.Name, got, node.Deploy.Replicas)
	}
	if !regexp.MustCompile(`health_uri\s+/readyz`).Match(caddy) {
		t.Error("the Caddyfile does not ask /readyz")
	}
	dockerfile, err := os.ReadFile("docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`HEALTHCHECK .*\["/usr/local/bin/parla", "healthcheck"\]`).Match(dockerfile) {
		t.Error("the Dockerfile's HEALTHCHECK does not run parla healthcheck")
	}
}
