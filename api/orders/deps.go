package orders

import (
	"log/slog"

	"parla/providers"
	"parla/providers/sqldb"
)

// Deps are the outside parts the order book drives.
type Deps struct {
	DB       *sqldb.DB
	Payments providers.Payments
	Storage  providers.Storage
	Mailer   providers.Mailer
	Letters  Letters
	Speaker  providers.Speaker
	// Transcriber serves audio- and video-to-text; Audio checks uploads and fetched audio;
	// Links analyses and fetches video links. Without them those services are closed.
	Transcriber providers.Transcriber
	Audio       AudioChecker
	Links       LinkResolver
	// Turns puts previews after paid work on the transcriber (EngineTurns); the API's
	// transcriptions are paid work too, so the app shares one. Nil: the book makes its own.
	Turns *EngineTurns
	// Observer hears of orders' state changes (metrics); nil: nobody.
	Observer Observer
	Log      *slog.Logger
}
