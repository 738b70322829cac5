package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/media/links"
	"parla/providers"
	"parla/providers/stripe"
)

// docRow matches a row of the "Error codes" table in README.md: | `code` | status | when |.
var docRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| ([0-9]{3}) \\|")

// documentedCodes reads the README's error table, in order, as code → status.
func documentedCodes(t *testing.T) ([]string, map[string]int, string) {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, table, ok := strings.Cut(doc, "\n## Error codes\n")
	if !ok {
		t.Fatal(`README.md has no "## Error codes" section`)
	}
	var order []string
	statuses := map[string]int{}
	for _, line := range strings.Split(table, "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			status, _ := strconv.Atoi(m[2])
			if _, dup := statuses[m[1]]; dup {
				t.Errorf("README lists %s twice", m[1])
			}
			order = append(order, m[1])
			statuses[m[1]] = status
		}
	}
	return order, statuses, doc
}

func TestErrorTableMatchesTheDocs(t *testing.T) {
	order, documented, doc := documentedCodes(t)
	if !slices.Equal(order, ErrorCodes()) {
		t.Errorf("README's error codes, in order:\n %v\nthe table's:\n %v", order, ErrorCodes())
	}
	for _, k := range errorKinds {
		if got, ok := documented[k.code]; !ok || got != k.status {
			t.Errorf("%s: the table says %d, README says %d", k.code, k.status, got)
		}
	}
	// Every code an endpoint's "Errors" line names is one the table has.
	mention := regexp.MustCompile("`([a-z]+(?:_[a-z]+)+|[a-z]+)`")
	for _, line := range strings.Split(doc, "\n") {
		if !strings.Contains(line, "rror") && !strings.HasPrefix(line, "`") && !strings.HasPrefix(line, "- `") {
			continue
		}
		for _, m := range mention.FindAllStringSubmatch(line, -1) {
			if looksLikeErrorCode(m[1]) {
				if _, ok := documented[m[1]]; !ok {
					t.Errorf("README names error code %q that the table lacks: %s", m[1], line)
				}
			}
		}
	}
}

// looksLikeErrorCode tells the codes in prose from other backticked words (fields, states,
// formats), which the README names too.
func looksLikeErrorCode(word string) bool {
	notCodes := []string{"awaiting_payment", "verbose_json", "response_format", "payment_intent",
		"payment_status", "client_reference_id", "source_changed", "source_gone", "upload_missing",
		"production_failed", "unit_amount", "price_data", "expires_at"}
	if slices.Contains(notCodes, word) || !strings.Contains(word, "_") {
		return false
	}
	return true
}

func TestEveryCodeHasAMessageForVisitors(t *testing.T) {
	for _, lng := range []string{"en", "jp", "es", "ru", "zh", "ar"} {
		data, err := os.ReadFile("../webui/src/locales/" + lng + "/translation.json")
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Errors map[string]string `json:"errors"`
		}
		if err := json.Unmarshal(data, &tr); err != nil {
			t.Fatal(err)
		}
		for _, code := range ErrorCodes() {
			if strings.TrimSpace(tr.Errors[code]) == "" {
				t.Errorf("%s: no message errors.%s", lng, code)
			}
		}
	}
}

func TestErrorTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range errorKinds {
		if seen[k.code] {
			t.Errorf("%s is in the table twice", k.code)
		}
		seen[k.code] = true
		if k.status < 400 || k.status > 599 || k.message == "" {
			t.Errorf("%s: status %d, message %q", k.code, k.status, k.message)
		}
	}
	if kindOf("no_such_code").code != "internal" {
		t.Error("an unknown code does not fall back to internal")
	}
}

func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("doing something: %w", err) }
	tests := []struct {
		err    error
		code   string
		status int
	}{
		{&orders.InputError{Code: "invalid_voice", Message: "voice must be one of …"}, "invalid_voice", 400},
		{wrap(&orders.InputError{Code: "video_too_long", Message: "3 h is the most"}), "video_too_long", 422},
		{wrap(orders.ErrPriceMismatch), "price_mismatch", 409},
		{wrap(orders.ErrUploadNotFound), "upload_not_found", 404},
		{wrap(orders.ErrNotFound), "session_not_found", 404},
		{wrap(providers.ErrSessionNotFound), "session_not_found", 404},
		{orders.ErrWrongService, "wrong_service", 404},
		{orders.ErrUnpaid, "payment_required", 402},
		{wrap(orders.ErrLinkExpired), "link_expired", 410},
		{wrap(orders.ErrServiceUnavailable), "service_unavailable", 503},
		{wrap(providers.ErrPaymentProvider), "payment_provider_error", 503},
		{wrap(links.ErrUnsupportedLink), "unsupported_link", 400},
		{wrap(links.ErrForbiddenAddress), "forbidden_address", 400},
		{wrap(links.ErrLiveStream), "live_stream", 422},
		{wrap(links.ErrVideoUnavailable), "video_unavailable", 422},
		{wrap(links.ErrNotMedia), "not_media", 422},
		{wrap(links.ErrTooLong), "video_too_long", 422},
		{wrap(links.ErrSourceUnreachable), "source_unreachable", 422},
		{wrap(links.ErrPlatformUnreachable), "platform_unreachable", 502},
		{wrap(stripe.ErrSessionExpired), "session_expired", 410},
		{wrap(stripe.ErrSessionPaid), "session_paid", 409},
		{wrap(stripe.ErrBadSignature), "invalid_signature", 400},
		{wrap(stripe.ErrBadPayload), "invalid_payload", 400},
		{fiber.ErrNotFound, "not_found", 404},
		{fiber.ErrRequestEntityTooLarge, "too_large", 413},
		{fiber.ErrTooManyRequests, "rate_limited", 429},
		{fiber.ErrBadRequest, "bad_request", 400},
		{fiber.ErrBadGateway, "internal", 500},
		{fail("missing_session", ""), "missing_session", 400},
		{errors.New("disk on fire"), "internal", 500},
	}
	for _, tt := range tests {
		got := classify(tt.err)
		if got.kind.code != tt.code || got.kind.status != tt.status {
			t.Errorf("classify(%v) = %s %d, want %s %d", tt.err, got.kind.code, got.kind.status, tt.code, tt.status)
		}
		if tt.code == "internal" && got.message != kindOf("internal").message {
			t.Errorf("an internal error leaks %q", got.message)
		}
	}
}
