// Package webui holds the built React app of Parla.
//
// The app is built by `npm run build` (in this folder) into dist/, which is
// embedded here so the Go binary serves the whole site on its own. Only
// dist/.gitkeep is committed: a build without the frontend still compiles and
// simply serves an empty app.
package webui

import "embed"

// Dist is the built single-page app (index.html plus hashed assets under
// assets/). The server serves files from it and falls back to index.html for
// every other GET path, so client-side routes such as /tts and
// /payment/success load the app.
//
//go:embed all:dist
var Dist embed.FS

// Locales are the interface's strings (src/locales/<id>/translation.json); the server
// reads the page titles and descriptions from them, the same strings the app shows.
//
//go:embed src/locales/*/translation.json
var Locales embed.FS

// Languages are the interface languages (src/languages.json: code, tag, hreflang, og:locale,
// name, direction), the one list the app and the server's pages both read.
//
//go:embed src/languages.json
var Languages []byte

// Pages are the app's routes with the locale keys of their title and description
// (src/pages.json; noindex for pages that only make sense mid-order), the one list the
// app's router and the server's pages both read.
//
//go:embed src/pages.json
var Pages []byte
