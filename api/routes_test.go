package api

import (
	"testing"
)

// The addresses the order book hands out (checkout returns) are pages the site serves.
func TestOrderRoutesArePagesOfTheSite(t *testing.T) {
	app := pagesApp(t, Retention{})
	r := OrderRoutes()
	for svc, path := range r.Success {
		if code, _, _ := getPage(t, app, path+"?session_id=cs_x"); code != 200 {
			t.Errorf("%s's success page %s answers %d", svc, path, code)
		}
	}
	for svc, path := range r.Cancel {
		if code, _, _ := getPage(t, app, path); code != 200 {
			t.Errorf("%s's cancel page %s answers %d", svc, path, code)
		}
	}
	for _, path := range []string{CreditPage, CreditSuccess + "?session_id=cs_x"} {
		if code, _, _ := getPage(t, app, path); code != 200 {
			t.Errorf("the credit's page %s answers %d", path, code)
		}
	}
	if len(r.Success) != 3 || len(r.Cancel) != 3 {
		t.Errorf("routes for %d and %d services, want the three", len(r.Success), len(r.Cancel))
	}
}
