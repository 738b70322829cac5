package orders

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// pricingCase is one row of testdata/pricing_cases.json, the boundary cases the Go rule
// (Rule.Amount) and the UI's copy of it (webui/src/lib/pricing.js, priceCents) both pass.
type pricingCase struct {
	Name     string `json:"name"`
	Rule     Rule   `json:"rule"`
	Quantity int64  `json:"quantity"`
	Amount   int64  `json:"amount"`
}

func loadPricingCases(t *testing.T) []pricingCase {
	t.Helper()
	b, err := os.ReadFile("testdata/pricing_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		About string        `json:"about"`
		Cases []pricingCase `json:"cases"`
	}
	// A misspelt field (say "min_amount") would silently read as zero: refuse it.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("pricing_cases.json: %v", err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("pricing_cases.json holds no cases")
	}
	return file.Cases
}

func TestPricingCasesShared(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadPricingCases(t) {
		if seen[c.Name] {
			t.Errorf("case name %q repeated", c.Name)
		}
		seen[c.Name] = true
		r := c.Rule
		if r.UnitAmount <= 0 || r.Per <= 0 || r.MinAmount < 0 || (r.Rounding != PerStartedUnit && r.Rounding != Proportional) {
			t.Errorf("%s: rule %+v is not one ParsePricing accepts", c.Name, r)
			continue
		}
		if got := r.Amount(c.Quantity); got != c.Amount {
			t.Errorf("%s: %+v.Amount(%d) = %d, the table says %d", c.Name, r, c.Quantity, got, c.Amount)
		}
	}
}

// TestPricingCasesCoverDefaults makes sure the table speaks of the prices actually charged:
// every default rule appears in it, at zero, one, per-1, per and per+1.
func TestPricingCasesCoverDefaults(t *testing.T) {
	cases := loadPricingCases(t)
	for svc, rule := range DefaultPricing().Rules {
		quantities := map[int64]bool{}
		for _, c := range cases {
			if c.Rule == rule {
				quantities[c.Quantity] = true
			}
		}
		for _, q := range []int64{0, 1, rule.Per - 1, rule.Per, rule.Per + 1} {
			if !quantities[q] {
				t.Errorf("pricing_cases.json has no case for the default %s rule %+v at quantity %d", svc, rule, q)
			}
		}
	}
}
