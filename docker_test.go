package main

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
		DependsOn   map[string]struct {
			Condition string
			Required  *bool
		} `yaml:"depends_on"`
		Networks map[string]struct {
			IPv4Address string `yaml:"ipv4_address"`
		}
	}
	Networks map[string]struct {
		IPAM struct{ Config []struct{ Subnet string } }
	}
}

// composeVar is one ${NAME:-default} or ${NAME:?message} in compose.yaml.
var composeVar = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}`)

// withDefaults is a compose.yaml value as compose sees it with no .env: each variable at its
// default, and a required one (:?) as <NAME>.
func withDefaults(v string) string {
	return composeVar.ReplaceAllStringFunc(v, func(m string) string {
		p := composeVar.FindStringSubmatch(m)
		if p[2] == "-" {
			return p[3]
		}
		return "<" + p[1] + ">"
	})
}

// readCompose is compose.yaml, parsed, with every variable at its default.
func readCompose(t *testing.T) (composeFile, string) {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal([]byte(withDefaults(string(data))), &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c, string(data)
}

// compose.yaml starts what the README says, with health checks through the binary, and
// passes the app only settings config.go reads; Caddy finds the scaled profile's replicas
// by their service name (so any number works) and no container has a fixed address.
func TestComposeFile(t *testing.T) {
	c, _ := readCompose(t)
	for _, s := range []string{"app", "node", "caddy", "postgres", "minio", "mailpit", "prometheus", "grafana"} {
		if _, ok := c.Services[s]; !ok {
			t.Errorf("compose.yaml has no service %q", s)
		}
	}
	// The settings are read in config.go and its neighbours (config_api.go, config_openai.go).
	var configSrc []byte
	names, _ := filepath.Glob("config*.go")
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		configSrc = append(configSrc, src...)
	}
	healthcheck := []string{"CMD", "/usr/local/bin/parla", "healthcheck"}
	for _, name := range []string{"app", "node"} {
		s := c.Services[name]
		if !slices.Equal(s.Healthcheck.Test, healthcheck) {
			t.Errorf("%s health check = %v, want %v", name, s.Healthcheck.Test, healthcheck)
		}
		for k := range s.Environment {
			if !strings.Contains(string(configSrc), `"`+k+`"`) {
				t.Errorf("%s passes %s, which no config*.go reads", name, k)
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

	// No fixed address (another container may already hold it when Caddy starts): the nodes
	// trust the compose network's range for X-Forwarded-For instead.
	for name, s := range c.Services {
		for nw, n := range s.Networks {
			if n.IPv4Address != "" {
				t.Errorf("%s has the fixed address %s on %s", name, n.IPv4Address, nw)
			}
		}
	}
	var subnets []string
	for _, cfg := range c.Networks["default"].IPAM.Config {
		subnets = append(subnets, cfg.Subnet)
	}
	if proxies := node.Environment["TRUSTED_PROXIES"]; len(subnets) == 0 || !slices.Contains(subnets, proxies) {
		t.Errorf("node: TRUSTED_PROXIES=%q, want the compose network's range %v", proxies, subnets)
	}

	caddy, err := os.ReadFile("docker/caddy/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`dynamic a \{[^}]*\bname node\b[^}]*\bport 8080\b`).Match(caddy) {
		t.Error("the Caddyfile does not find the replicas by the service name node (dynamic a, port 8080)")
	}
	if regexp.MustCompile(`-node-\d`).Match(caddy) {
		t.Error("the Caddyfile names replicas by one compose implementation's container names")
	}
	for _, passive := range []string{`max_fails\s+\d`, `unhealthy_status\s+5`, `lb_try_duration\s+\d`} {
		if !regexp.MustCompile(passive).Match(caddy) {
			t.Errorf("the Caddyfile lacks %s: a dead replica would keep getting visitors", passive)
		}
	}
	dockerfile, err := os.ReadFile("docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`HEALTHCHECK .*\["/usr/local/bin/parla", "healthcheck"\]`).Match(dockerfile) {
		t.Error("the Dockerfile's HEALTHCHECK does not run parla healthcheck")
	}
}

// With no .env, compose publishes no side service on every interface, and no secret has a
// default anyone could read here: each is required (${NAME:?…}) and listed in .env.example.
// TestComposeVoices: the voices profile runs Kokoro-FastAPI's CPU image at a released tag
// (KOKORO_IMAGE to change it), checked by its /health, on the compose network only; the app
// waits for it only when the profile runs; .env.example names the settings that wire the app
// to it (.ci/deploy.sh's phase voices runs them with a stand-in image).
func TestComposeVoices(t *testing.T) {
	c, raw := readCompose(t)
	k := c.Services["kokoro"]
	if !slices.Equal(k.Profiles, []string{"voices"}) || len(k.Ports) != 0 ||
		!regexp.MustCompile(`^ghcr\.io/remsky/kokoro-fastapi-cpu:v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(k.Image) ||
		!strings.Contains(raw, "${KOKORO_IMAGE:-") {
		t.Errorf("kokoro: profiles %v, ports %v, image %q (want a released tag, KOKORO_IMAGE to change it)", k.Profiles, k.Ports, k.Image)
	}
	if !slices.Contains(k.Healthcheck.Test, "http://localhost:8880/health") {
		t.Errorf("kokoro health check %v", k.Healthcheck.Test)
	}
	for _, name := range []string{"app", "node"} {
		d, ok := c.Services[name].DependsOn["kokoro"]
		if !ok || d.Condition != "service_healthy" || d.Required == nil || *d.Required {
			t.Errorf("%s does not wait for a healthy kokoro only when the profile runs: %+v", name, d)
		}
	}
	example, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"COMPOSE_PROFILES=voices", "TTS_ENGINE=openai,espeak",
		"OPENAI_TTS_BASE_URL=http://kokoro:8880/v1", "OPENAI_TTS_MODEL=kokoro", "OPENAI_TTS_API_KEY=none"} {
		if !regexp.MustCompile(`(?m)^# ` + regexp.QuoteMeta(line) + `$`).Match(example) {
			t.Errorf(".env.example does not show %s", line)
		}
	}
}

func TestComposeSafeByDefault(t *testing.T) {
	c, raw := readCompose(t)
	public := map[string]bool{"app": true, "caddy": true} // the site itself
	for name, s := range c.Services {
		for _, p := range s.Ports {
			if !public[name] && !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %s on every interface", name, p)
			}
		}
	}
	for _, s := range []string{"prometheus", "grafana"} {
		if !slices.Contains(c.Services[s].Profiles, "monitoring") {
			t.Errorf("%s is not in the monitoring profile", s)
		}
	}
	example, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]bool{}
	for _, m := range composeVar.FindAllStringSubmatch(raw, -1) {
		if m[2] == "?" {
			required[m[1]] = true
		}
		if m[2] == "-" && regexp.MustCompile(`PASSWORD|SECRET`).MatchString(m[1]) && m[3] != "" {
			t.Errorf("compose.yaml gives %s the default %q", m[1], m[3])
		}
	}
	for _, want := range []string{"MINIO_ROOT_PASSWORD", "POSTGRES_PASSWORD", "GRAFANA_ADMIN_PASSWORD"} {
		if !required[want] {
			t.Errorf("compose.yaml does not require %s", want)
		}
	}
	for name := range required {
		if !regexp.MustCompile(`(?m)^` + name + `=$`).Match(example) {
			t.Errorf(".env.example does not list %s (empty, to be filled in)", name)
		}
	}
}

// The image builds from what is pinned here: whisper.cpp from the vendored tarball, checked
// against the SHA-256 in its SHA256SUMS (GitHub only when asked), and a build context
// without history, local data, dependencies or models.
func TestDockerBuildInputs(t *testing.T) {
	dockerfile, err := os.ReadFile("docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile("../shared/vendor/whisper.cpp/SHA256SUMS")
	if err != nil {
		// CI has the vendored tarball (.ci/run): its absence there is a failure.
		testkit.Missing(t, "no vendored whisper.cpp here: "+err.Error())
	}
	sum, _, _ := strings.Cut(string(sums), " ")
	if !strings.Contains(string(dockerfile), "WHISPER_SHA256="+sum) || !strings.Contains(string(dockerfile), "sha256sum -c") {
		t.Errorf("the Dockerfile does not check the vendored tarball's SHA-256 %s", sum)
	}
	if !regexp.MustCompile(`elif \[ -n "\$WHISPER_GIT" \]`).Match(dockerfile) {
		t.Error("the Dockerfile fetches whisper.cpp from GitHub without being asked (WHISPER_GIT)")
	}
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(ignore), "\n")
	for _, want := range []string{".git", "data", "bin", "test-artifacts", "webui/node_modules", "models/*.bin"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore does not keep %s out", want)
		}
	}
}
