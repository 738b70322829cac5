package texts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// siteLocale reads the web UI's locale file of lng into v.
func siteLocale(t *testing.T, lng string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "webui", "src", "locales", lng, "translation.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// The letters and the link page name the services with the site's own menu words where the
// language lets a name stand alone (in quotes or as a label); English and Spanish build a
// sentence around a lower-case form instead.
func TestServicesNamedAsTheSiteNamesThem(t *testing.T) {
	for _, lng := range []string{"ru", "ar", "jp", "zh"} {
		var site struct {
			Nav map[string]string `json:"nav"`
		}
		siteLocale(t, lng, &site)
		for _, svc := range []string{"tts", "sst", "vtt"} {
			if got, want := catalog[lng]["service."+svc], site.Nav[svc]; got != want {
				t.Errorf("%s service.%s = %q, the site says %q", lng, svc, got, want)
			}
		}
	}
}

// The link page's header and footer say what the site's header and footer say.
func TestSiteWordsAreTheSites(t *testing.T) {
	for _, lng := range Locales() {
		type title struct {
			Title string `json:"title"`
		}
		var site struct {
			App struct {
				Slogan string `json:"slogan"`
			} `json:"app"`
			Legal struct {
				FooterLabel             string `json:"footerLabel"`
				Terms, Privacy, Refunds title
			} `json:"legal"`
		}
		siteLocale(t, lng, &site)
		for key, want := range map[string]string{"site.slogan": site.App.Slogan, "site.legal": site.Legal.FooterLabel,
			"site.terms": site.Legal.Terms.Title, "site.privacy": site.Legal.Privacy.Title, "site.refunds": site.Legal.Refunds.Title} {
			if got := catalog[lng][key]; got != want {
				t.Errorf("%s %s = %q, the site says %q", lng, key, got, want)
			}
		}
	}
}

// Go's plural forms are those the web UI's locale files use (i18next, by Intl.PluralRules),
// but for Japanese: "jp" is no language tag, so i18next gives it the default one/other,
// whose forms are the same there; CLDR's Japanese has other alone.
func TestPluralFormsAgreeWithTheLocaleFiles(t *testing.T) {
	suffix := regexp.MustCompile(`_(zero|one|two|few|many|other)$`)
	for _, lng := range Locales() {
		used := map[string]bool{}
		var walk func(v any, key string)
		walk = func(v any, key string) {
			if m, ok := v.(map[string]any); ok {
				for k, sub := range m {
					walk(sub, k)
				}
				return
			}
			if m := suffix.FindStringSubmatch(key); m != nil {
				used[m[1]] = true
			}
		}
		var root any
		siteLocale(t, lng, &root)
		walk(root, "")
		var files []string
		for _, c := range []string{"zero", "one", "two", "few", "many", "other"} {
			if used[c] {
				files = append(files, c)
			}
		}
		if lng == "jp" {
			files = []string{"other"}
		}
		if got := PluralForms(lng); !slices.Equal(got, files) {
			t.Errorf("%s: Go's plural forms %v, the locale files' %v", lng, got, files)
		}
	}
}
