package main

import (
	gobuild "go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importRules are ARCHITECTURE.md's "what may import what", for the project's own
// packages and the few outside ones that mark a layer (HTTP, the database).
var importRules = []struct {
	dir     string   // package folder
	mayUse  []string // project packages it may import (prefix match)
	mustNot []string // outside packages it must not import
}{
	{"media", nil, []string{"net/http", "net", "database/sql", "github.com/gofiber/fiber/v2"}},
	{"media/links", []string{"parla/media"}, []string{"database/sql", "github.com/gofiber/fiber/v2"}},
	{"providers", nil, []string{"github.com/gofiber/fiber/v2"}},
	{"providers/transcript", []string{"parla/providers", "parla/media"}, nil}, // media: the sentence-end rule
	{"providers/speechlang", nil, []string{"github.com/gofiber/fiber/v2", "net/http"}},
	{"providers/espeak", []string{"parla/providers", "parla/media"}, []string{"github.com/gofiber/fiber/v2"}},
	{"providers/openai", []string{"parla/providers", "parla/media"}, []string{"github.com/gofiber/fiber/v2"}},
	{"providers/whisper", []string{"parla/providers", "parla/media"}, []string{"github.com/gofiber/fiber/v2"}},
	{"providers/sqldb", nil, []string{"github.com/gofiber/fiber/v2", "net/http"}},
	{"providers/storage", []string{"parla/providers"}, []string{"github.com/gofiber/fiber/v2"}},
	{"providers/stripe", []string{"parla/providers"}, []string{"github.com/gofiber/fiber/v2"}},
	{"providers/mail", []string{"parla/providers"}, []string{"github.com/gofiber/fiber/v2"}},
	// The server's translated texts: nothing of ours, so every part may use them.
	{"providers/texts", nil, []string{"github.com/gofiber/fiber/v2", "net/http"}},
	{"api/orders", []string{"parla/providers", "parla/media"}, []string{"github.com/gofiber/fiber/v2", "net/http",
		"github.com/prometheus/client_golang/prometheus"}},
	{"api", []string{"parla/api/orders", "parla/api/health", "parla/providers", "parla/media/links"},
		[]string{"github.com/prometheus/client_golang/prometheus"}},
	// health knows no HTTP and nothing of ours: main hands it the checks.
	{"api/health", nil, []string{"github.com/gofiber/fiber/v2", "net/http", "database/sql"}},
	// metrics counts what the order book tells it and reads its gauges; no SQL of its own.
	{"api/metrics", []string{"parla/api/orders", "parla/api/health"}, []string{"database/sql"}},
	// The admin area speaks HTTP over the order book's operator side; it never reaches
	// the database or the providers itself, and api never imports it (main wires it).
	{"api/admin", []string{"parla/api/orders"}, []string{"database/sql"}},
}

func TestImportRules(t *testing.T) {
	for _, r := range importRules {
		pkg, err := gobuild.ImportDir(filepath.FromSlash(r.dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", r.dir, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, "parla") && !slices.ContainsFunc(r.mayUse, func(p string) bool {
				return imp == p || strings.HasPrefix(imp, p+"/")
			}) {
				t.Errorf("%s imports %s; it may import only %v", r.dir, imp, r.mayUse)
			}
			if slices.Contains(r.mustNot, imp) {
				t.Errorf("%s imports %s", r.dir, imp)
			}
		}
	}
}
