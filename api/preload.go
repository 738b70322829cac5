package api

import (
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"strings"
)

// preloads are what a page's own first paint needs besides the entry script, read from
// Vite's manifest (webui/dist/.vite/manifest.json: each source module's chunk and the
// chunks it imports): the strings of the page's language and its screen (pages.json's
// "screen"). Preloaded with the entry, they arrive side by side with it instead of one
// after the other once the entry has run.
type preloads map[string]manifestChunk

// manifestChunk is one entry of Vite's manifest.
type manifestChunk struct {
	File    string   `json:"file"`
	Imports []string `json:"imports"`
	IsEntry bool     `json:"isEntry"`
}

// readPreloads reads the manifest from ui; without one (no app built) nothing is preloaded.
func readPreloads(ui fs.FS) preloads {
	if ui == nil {
		return nil
	}
	data, err := fs.ReadFile(ui, ".vite/manifest.json")
	if err != nil {
		return nil
	}
	var m preloads
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// files are the chunks of modules and of what they import, each once, in order; the entry
// is left out (the page's script element loads it).
func (p preloads) files(modules ...string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(key string)
	walk = func(key string) {
		c, ok := p[key]
		if !ok || seen[key] || c.IsEntry {
			return
		}
		seen[key] = true
		out = append(out, c.File)
		for _, imp := range c.Imports {
			walk(imp)
		}
	}
	for _, m := range modules {
		walk(m)
	}
	return out
}

// links writes a modulepreload link for each chunk the page of screen (a source module;
// "" for the home page, which is in the entry) needs in the language langID.
func (p preloads) links(b *strings.Builder, langID, screen string) {
	for _, f := range p.files("src/locales/"+langID+"/translation.json", screen) {
		fmt.Fprintf(b, "    <link rel=\"modulepreload\" crossorigin href=\"/%s\" />\n", html.EscapeString(f))
	}
}
