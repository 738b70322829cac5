package orders

import "errors"

// ErrLinkExpired is returned by Download for a link past its 10 days or a swept result.
var ErrLinkExpired = errors.New("download link expired")

// The addresses of a delivered order: the download (/d/) and its link page (/r/), both
// from its link token; "" before it has one. Book.Link and Book.PageLink give them.

func linkURL(publicURL string, o Order) string {
	if o.LinkToken == "" {
		return ""
	}
	return publicURL + "/d/" + o.LinkToken
}

func pageURL(publicURL string, o Order) string {
	if o.LinkToken == "" {
		return ""
	}
	return publicURL + "/r/" + o.LinkToken
}
