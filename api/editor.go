package api

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/providers"
)

// The transcript editor (/r/{token}/edit) is a lazily loaded screen of the app; it reads and
// saves through /r/{token}/transcript. The link's token is the only key, as for the link
// page: whoever holds the letter's link may correct it. Saving and going back to the
// original change what the link serves, so, like "delete now", they are obeyed only from
// this site's own pages (sameOrigin). The text is the visitor's: handlers never log it.
//
// The text has a version (its ETag). A change names the version it started from in
// If-Match and is refused (409 edit_conflict) when another change came first, from
// another tab, device or node; one without If-Match is refused too (428 version_required):
// it could only overwrite blindly, and an editor loaded before versions existed must not.

// editorCue is one cue on the wire: times in whole milliseconds; the speaker where the
// engine told speakers apart or the visitor named one.
type editorCue struct {
	Start   int64  `json:"start"`
	End     int64  `json:"end"`
	Text    string `json:"text"`
	Speaker string `json:"speaker,omitempty"`
}

// editorTranscript is GET /r/{token}/transcript's answer.
type editorTranscript struct {
	OK       bool        `json:"ok"`
	Language string      `json:"language"`
	Duration int64       `json:"duration"` // milliseconds: no cue may end after it
	Format   string      `json:"format"`   // the format ordered
	Original []editorCue `json:"original"` // as delivered: cleaned of what the engine invented
	Edited   []editorCue `json:"edited"`   // null until the visitor saves
}

// textETag is the entity tag of version v of a link's transcript text.
func textETag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// ifMatchVersion reads the version a change started from out of its If-Match: one strong
// entity tag of ours, or "*" (orders.AnyVersion). None is 428 version_required; any other
// value names no version the text ever had, so, as a stale one, 409 edit_conflict.
func ifMatchVersion(header string) (int64, error) {
	h := strings.TrimSpace(header)
	switch {
	case h == "":
		return 0, fail("version_required", "")
	case h == "*":
		return orders.AnyVersion, nil
	}
	v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(h, `"`), `"`), 10, 64)
	if err != nil || v < 0 || textETag(v) != h {
		return 0, fail("edit_conflict", "If-Match names no version of this transcript")
	}
	return v, nil
}

// cuesOf writes segments as the editor's cues.
func cuesOf(segs []providers.Segment) []editorCue {
	out := make([]editorCue, len(segs))
	for i, s := range segs {
		out[i] = editorCue{Start: s.Start.Milliseconds(), End: s.End.Milliseconds(), Text: s.Text, Speaker: s.Speaker}
	}
	return out
}

// segmentsOf reads the editor's cues back. A time is checked before it is converted: one
// past what a time.Duration holds in milliseconds would wrap (18446744073710 became 0).
func segmentsOf(cues []editorCue) ([]providers.Segment, error) {
	out := make([]providers.Segment, len(cues))
	for i, c := range cues {
		if !cueMillis(c.Start) || !cueMillis(c.End) {
			return nil, fail("invalid_transcript", fmt.Sprintf("cue %d: a time out of range", i+1))
		}
		out[i] = providers.Segment{Start: time.Duration(c.Start) * time.Millisecond, End: time.Duration(c.End) * time.Millisecond,
			Text: c.Text, Speaker: c.Speaker}
	}
	return out, nil
}

// cueMillis tells whether ms is a time a cue may have: not negative, and within what a
// time.Duration holds.
func cueMillis(ms int64) bool {
	return ms >= 0 && ms <= int64(math.MaxInt64/time.Millisecond)
}

// editableOrder finds the link's order for the editor's JSON routes.
func (s editorHandlers) editableOrder(c *fiber.Ctx) (orders.Order, error) {
	o, err := s.deps.Book.Download(c.UserContext(), c.Params("token"))
	if errors.Is(err, orders.ErrNotFound) {
		return o, fail("not_found", "no such link")
	}
	return o, err
}

// editorTranscript answers the delivered transcript and the visitor's saved edit.
func (s editorHandlers) editorTranscript(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	o, err := s.editableOrder(c)
	if err != nil {
		return err
	}
	e, err := s.deps.Book.Results.Editable(c.UserContext(), o)
	if err != nil {
		return err
	}
	out := editorTranscript{OK: true, Language: e.Original.Language, Format: e.Format,
		Duration: orders.EditLimit(e.Original).Milliseconds(), Original: cuesOf(e.Delivered().Segments)}
	if e.Edited != nil {
		out.Edited = cuesOf(e.Edited.Segments)
	}
	c.Set(fiber.HeaderETag, textETag(e.Version))
	return c.JSON(out)
}

// changeableOrder is editableOrder for a change (save, back to the original): refused from
// another site, as "Delete now" is, and without the version it started from (If-Match).
func (s editorHandlers) changeableOrder(c *fiber.Ctx) (orders.Order, int64, error) {
	o, err := s.editableOrder(c)
	if err == nil && !sameOrigin(c, s.cfg.PublicURL) {
		err = fail("cross_site", "")
	}
	if err != nil {
		return o, 0, err
	}
	v, err := ifMatchVersion(c.Get(fiber.HeaderIfMatch))
	return o, v, err
}

// saveTranscript stores the visitor's edit (PUT {cues: [...]}) and answers what was stored,
// with the text's new version.
func (s editorHandlers) saveTranscript(c *fiber.Ctx) error {
	o, version, err := s.changeableOrder(c)
	if err != nil {
		return err
	}
	var body struct {
		Cues []editorCue `json:"cues"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	segs, err := segmentsOf(body.Cues)
	if err != nil {
		return err
	}
	t, v, err := s.deps.Book.Results.SaveEdit(c.UserContext(), o, segs, version)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, textETag(v))
	return c.JSON(fiber.Map{"ok": true, "edited": cuesOf(t.Segments)})
}

// revertTranscript removes the visitor's edit: the link serves the original again.
func (s editorHandlers) revertTranscript(c *fiber.Ctx) error {
	o, version, err := s.changeableOrder(c)
	if err != nil {
		return err
	}
	v, err := s.deps.Book.Results.Revert(c.UserContext(), o, version)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, textETag(v))
	return c.JSON(fiber.Map{"ok": true})
}

// editAddress is the editor's address for a link, in the page's language (an interface id).
func editAddress(lng, token string) string {
	for _, l := range siteLanguages {
		if l.ID == lng {
			return l.prefix() + "/r/" + token + "/edit"
		}
	}
	return "/r/" + token + "/edit"
}

// editorSitePage names the editor's page; it has no canonical address (its own holds a
// token), so it is rendered as a page without alternates.
var editorSitePage = sitePage{title: "editor.title", description: "meta.description", noindex: true}

// editorPage serves the app for /r/{token}/edit (and its language-prefixed address) to a
// live link's holder, with the link page's guards: no caching, no referrer, no index. An
// unknown or lapsed link gets the link page's 404/410.
func (s editorHandlers) editorPage(c *fiber.Ctx) error {
	if lng := c.Params("lang"); lng != "" {
		if l, _, _ := locate("/" + lng); l.prefix() != "/"+lng {
			return c.Next()
		}
	}
	o, err := s.deps.Book.Download(c.UserContext(), c.Params("token"))
	if err != nil {
		return s.linkError(c, o, err)
	}
	if s.deps.UI == nil {
		return c.Next()
	}
	index, err := fs.ReadFile(s.deps.UI, "index.html")
	if err != nil {
		return c.Next()
	}
	if s.pages != nil {
		lang, _, _ := locate(c.Path())
		index = s.pages.renderPage(index, lang, c.Path(), editorSitePage, false)
		c.Set(fiber.HeaderContentLanguage, lang.Hreflang)
	}
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set("X-Robots-Tag", "noindex")
	c.Type("html", "utf-8")
	return c.Send(index)
}
