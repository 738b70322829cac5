package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"mime/multipart"
	"slices"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// uploadCodes are the codes an upload can be refused with.
var uploadCodes = []string{"invalid_upload", "no_file", "too_many_files", "file_too_large"}

// FuzzReceiveFile streams a fuzzed multipart body, under a fuzzed Content-Type, to a
// buffer with a limit of up to 255 bytes. It never panics; a refusal is one of the upload
// codes; an accepted upload wrote exactly the first "file" part, whole, at most limit
// bytes; a refused one never wrote more than limit+1 bytes (the byte that shows the file
// is too large) and, when it wrote that byte, says file_too_large.
func FuzzReceiveFile(f *testing.F) {
	f.Add("multipart/form-data; boundary=XyZ",
		[]byte("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\n\r\nID3data\r\n--XyZ--\r\n"), uint8(16))
	f.Fuzz(func(t *testing.T, contentType string, body []byte, limitByte uint8) {
		limit := int64(limitByte)
		boundary, err := multipartBoundary(contentType)
		if err != nil {
			checkCode(t, err, "invalid_upload")
			return
		}
		var dst bytes.Buffer
		name, size, err := receiveFile(bytes.NewReader(body), boundary, limit, &dst)
		written := int64(dst.Len())
		if err != nil {
			checkCode(t, err, uploadCodes...)
			if written > limit+1 || (written == limit+1 && !hasCode(err, "file_too_large")) {
				t.Fatalf("refused (%v) after writing %d bytes with a limit of %d", err, written, limit)
			}
			return
		}
		if size != written || size > limit {
			t.Fatalf("accepted %q: size %d, wrote %d, limit %d", name, size, written, limit)
		}
		want, wantName, ok := firstFilePart(body, boundary)
		if !ok || !bytes.Equal(want, dst.Bytes()) || name != wantName {
			t.Fatalf("accepted %q (%d bytes), but the form's file part is %q (%d bytes, found %t)", name, size, wantName, len(want), ok)
		}
	})
}

// firstFilePart reads the form with mime/multipart's own reader, without limits, and
// returns the first part named "file".
func firstFilePart(body []byte, boundary string) ([]byte, string, bool) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, "", false
		}
		if part.FormName() == "file" {
			data, err := io.ReadAll(part)
			return data, part.FileName(), err == nil
		}
	}
}

// checkCode fails unless err is an apiError with one of codes.
func checkCode(t *testing.T, err error, codes ...string) {
	t.Helper()
	var ae *apiError
	if !errors.As(err, &ae) || !slices.Contains(codes, ae.kind.code) {
		t.Fatalf("error %v: want an apiError with one of %v", err, codes)
	}
}

func hasCode(err error, code string) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.kind.code == code
}

// FuzzDecodeOrder decodes a fuzzed body as the TTS checkout does, then adds up its line
// items. decodeJSON refuses with invalid_json what is not JSON; clientTotal returns nil
// without items, refuses with invalid_products a missing or negative price, a quantity
// below 1, mixed currencies or a total beyond int64, and otherwise returns the exact sum
// of unit_amount × quantity (worked out in arbitrary precision) and the one currency.
func FuzzDecodeOrder(f *testing.F) {
	f.Add([]byte(`{"order":{"voice":"alloy","input":"Hi","email":"a@example.com","emailVerify":"a@example.com"},"products":[{"price_data":{"currency":"eur","unit_amount":99},"quantity":1}]}`))
	app := fiber.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		fctx := &fasthttp.RequestCtx{}
		fctx.Request.Header.SetContentType("application/json")
		fctx.Request.SetBody(body)
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)

		var order ttsCheckoutBody
		if err := decodeJSON(c, &order); err != nil {
			checkCode(t, err, "invalid_json")
			return
		}
		if !json.Valid(body) {
			t.Fatalf("decodeJSON accepted %q, which is not one JSON value", body)
		}
		amount, currency, err := clientTotal(order.Products)
		if len(order.Products) == 0 {
			if amount != nil || currency != "" || err != nil {
				t.Fatalf("no products: %v, %q, %v", amount, currency, err)
			}
			return
		}
		exact, wantCurrency, valid := exactTotal(order.Products)
		if err != nil {
			checkCode(t, err, "invalid_products")
			if valid && exact.IsInt64() {
				t.Fatalf("clientTotal refused valid products worth %s: %v", exact, err)
			}
			return
		}
		if !valid || !exact.IsInt64() {
			t.Fatalf("clientTotal accepted products it must refuse (valid %t, exact %s): %d", valid, exact, *amount)
		}
		if *amount != exact.Int64() || *amount < 0 || currency != wantCurrency {
			t.Fatalf("clientTotal = %d %q, want %s %q", *amount, currency, exact, wantCurrency)
		}
	})
}

// exactTotal is the page's line items added up in arbitrary precision, and whether they
// are valid (a price not negative, a quantity of at least 1, one currency).
func exactTotal(items []lineItem) (*big.Int, string, bool) {
	total := new(big.Int)
	currency := items[0].PriceData.Currency
	for _, it := range items {
		q := int64(1)
		if it.Quantity != nil {
			q = *it.Quantity
		}
		if it.PriceData.UnitAmount == nil || *it.PriceData.UnitAmount < 0 || q < 1 || it.PriceData.Currency != currency {
			return total, currency, false
		}
		total.Add(total, new(big.Int).Mul(big.NewInt(*it.PriceData.UnitAmount), big.NewInt(q)))
	}
	return total, currency, true
}
