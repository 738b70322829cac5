package api

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// manifest is a Vite manifest as the build writes it: an entry, locale and screen chunks
// that import the entry and shared chunks (one of them twice).
const manifest = `{
  "index.html": {"file": "assets/index-E.js", "isEntry": true},
  "src/locales/es/translation.json": {"file": "assets/locale-es-1.js", "isDynamicEntry": true},
  "src/locales/en/translation.json": {"file": "assets/locale-en-2.js", "isDynamicEntry": true},
  "src/screens/tts/Tts.jsx": {"file": "assets/Tts-3.js", "imports": ["index.html", "_LanguageList-4.js", "_orderKey-5.js"]},
  "_LanguageList-4.js": {"file": "assets/LanguageList-4.js", "imports": ["index.html", "_orderKey-5.js"]},
  "_orderKey-5.js": {"file": "assets/orderKey-5.js", "imports": ["index.html"]},
  "src/screens/legal/Legal.jsx": {"file": "assets/Legal-6.js", "imports": ["index.html"]}
}`

// TestPagesPreloadTheirScreenAndLanguage: each page preloads its language's strings and its
// screen with what that imports, each once, never the entry (its own script element).
func TestPagesPreloadTheirScreenAndLanguage(t *testing.T) {
	app := pagesApp(t, Retention{LinkDays: 10})
	preloaded := regexp.MustCompile(`<link rel="modulepreload" crossorigin href="/([^"]+)" />`)
	for path, want := range map[string][]string{
		"/es/tts": {"assets/locale-es-1.js", "assets/Tts-3.js", "assets/LanguageList-4.js", "assets/orderKey-5.js"},
		"/":       {"assets/locale-en-2.js"},
		"/terms":  {"assets/locale-en-2.js", "assets/Legal-6.js"},
	} {
		_, page, _ := getPage(t, app, path)
		var got []string
		for _, m := range preloaded.FindAllStringSubmatch(page, -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s preloads %q, want %q", path, got, want)
		}
	}
}

// TestPagesNameTheirScreens: every screen pages.json names is a source module the build
// has (the manifest's key for it), so no page preloads nothing by a typo.
func TestPagesNameTheirScreens(t *testing.T) {
	for route, p := range sitePages {
		if p.screen == "" {
			continue
		}
		if _, err := os.Stat("../webui/" + p.screen); err != nil {
			t.Errorf("%s: screen %s: %v", route, p.screen, err)
		}
	}
	if n := len(sitePages["/tts"].screen); n == 0 {
		t.Error("/tts names no screen")
	}
}
