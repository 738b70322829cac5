package api

import (
	"strings"
	"testing"
)

// TestWriteConfig: the configuration goes into the head as a JSON script element, where no
// text in it can close the element (a hostile string in an operator's setting stays data);
// a page without a head is served as it is.
func TestWriteConfig(t *testing.T) {
	hostile := map[string]string{"contactEmail": `</script><script>alert(1)</script>&`}
	page := string(writeConfig([]byte(builtIndex), hostile))
	open := `<script type="application/json" id="parla-config">`
	at := strings.Index(page, open)
	if at < 0 || at > strings.Index(page, "</head>") {
		t.Fatalf("no config element in the head:\n%s", page)
	}
	if n := strings.Count(page, "</script>"); n != 1 {
		t.Errorf("%d </script> in the page, want only the element's own:\n%s", n, page)
	}
	body, _, _ := strings.Cut(page[at+len(open):], "</script>")
	if want := `{"contactEmail":"\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e\u0026"}`; body != want {
		t.Errorf("config element holds %s, want %s", body, want)
	}
	bare := []byte("<html><body>no head</body></html>")
	if got := writeConfig(bare, hostile); string(got) != string(bare) {
		t.Errorf("a page without </head> became %s", got)
	}
}
