package orders

import (
	"os"
	"testing"

	"parla/providers/testkit"
)

// The book's tests run on SQLite, and on Postgres with PARLA_TEST_DB=postgres (make test
// runs both).
func TestMain(m *testing.M) { os.Exit(testkit.RunWithDB(m)) }
