package texts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The letters and the link page name the services with the site's own menu words where the
// language lets a name stand alone (in quotes or as a label); English and Spanish build a
// sentence around a lower-case form instead.
func TestServicesNamedAsTheSiteNamesThem(t *testing.T) {
	for _, lng := range []string{"ru", "ar", "jp", "zh"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "webui", "src", "locales", lng, "translation.json"))
		if err != nil {
			t.Fatal(err)
		}
		var site struct {
			Nav map[string]string `json:"nav"`
		}
		if err := json.Unmarshal(raw, &site); err != nil {
			t.Fatal(err)
		}
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
		raw, err := os.ReadFile(filepath.Join("..", "..", "webui", "src", "locales", lng, "translation.json"))
		if err != nil {
			t.Fatal(err)
		}
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
		if err := json.Unmarshal(raw, &site); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]string{"site.slogan": site.App.Slogan, "site.legal": site.Legal.FooterLabel,
			"site.terms": site.Legal.Terms.Title, "site.privacy": site.Legal.Privacy.Title, "site.refunds": site.Legal.Refunds.Title} {
			if got := catalog[lng][key]; got != want {
				t.Errorf("%s %s = %q, the site says %q", lng, key, got, want)
			}
		}
	}
}
