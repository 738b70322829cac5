package api

import (
	"math"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

func TestClientTotal(t *testing.T) {
	item := func(currency string, unit int64, quantity ...int64) lineItem {
		var it lineItem
		it.PriceData.Currency = currency
		it.PriceData.UnitAmount = &unit
		if len(quantity) > 0 {
			it.Quantity = &quantity[0]
		}
		return it
	}
	noPrice := lineItem{}
	noPrice.PriceData.Currency = "eur"
	tests := []struct {
		name     string
		items    []lineItem
		want     int64 // -1: no amount (nil)
		currency string
		code     string // refusal code; "" when accepted
	}{
		{"no items", nil, -1, "", ""},
		{"one item, quantity 1 by default", []lineItem{item("eur", 99)}, 99, "eur", ""},
		{"quantities multiply", []lineItem{item("eur", 99, 3), item("eur", 1, 2)}, 299, "eur", ""},
		{"free item", []lineItem{item("eur", 0, 5)}, 0, "eur", ""},
		{"the largest total", []lineItem{item("eur", math.MaxInt64-1), item("eur", 1)}, math.MaxInt64, "eur", ""},
		{"missing price", []lineItem{noPrice}, 0, "", "invalid_products"},
		{"negative price", []lineItem{item("eur", -1)}, 0, "", "invalid_products"},
		{"quantity 0", []lineItem{item("eur", 99, 0)}, 0, "", "invalid_products"},
		{"two currencies", []lineItem{item("eur", 1), item("usd", 1)}, 0, "", "invalid_products"},
		{"one without a currency, then one with", []lineItem{item("", 0), item("eur", 0)}, 0, "", "invalid_products"},
		{"product overflows", []lineItem{item("eur", math.MaxInt64, 2)}, 0, "", "invalid_products"},
		{"sum overflows", []lineItem{item("eur", math.MaxInt64), item("eur", 1)}, 0, "", "invalid_products"},
		// 2^62 × 4 wraps to 0 in int64: the total would have read as the server's 99.
		{"wraps to a plausible price", []lineItem{item("eur", 1<<62, 4), item("eur", 99)}, 0, "", "invalid_products"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			amount, currency, err := clientTotal(tt.items)
			if tt.code != "" {
				if !hasCode(err, tt.code) {
					t.Fatalf("clientTotal = %v, %q, %v; want %s", amount, currency, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want < 0 {
				if amount != nil {
					t.Fatalf("amount %d, want none", *amount)
				}
				return
			}
			if amount == nil || *amount != tt.want || currency != tt.currency {
				t.Fatalf("clientTotal = %v %q, want %d %q", amount, currency, tt.want, tt.currency)
			}
		})
	}
}

func TestDecodeJSONRefusesWhatFollowsTheValue(t *testing.T) {
	app := fiber.New()
	for body, ok := range map[string]bool{
		`{"order":{}}`: true, "{\"order\":{}}\n ": true,
		`{"order":{}}]`: false, `{"order":{}}}`: false, `{"a":1}{"b":2}`: false, `{"a":1} x`: false, ``: false,
	} {
		fctx := &fasthttp.RequestCtx{}
		fctx.Request.Header.SetContentType("application/json")
		fctx.Request.SetBodyString(body)
		c := app.AcquireCtx(fctx)
		var v ttsCheckoutBody
		err := decodeJSON(c, &v)
		app.ReleaseCtx(c)
		if (err == nil) != ok {
			t.Errorf("decodeJSON(%q) = %v, want ok=%v", body, err, ok)
		}
	}
}
