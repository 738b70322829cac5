package orders

import "errors"

// ErrLinkExpired is returned by Download for a link past its 10 days or a swept result.
var ErrLinkExpired = errors.New("download link expired")

// Routes are the site's addresses the order book hands out, relative to Config.PublicURL.
// They are api's (api.OrderRoutes): the book is given them, it builds none.
type Routes struct {
	// Success and Cancel are where the hosted checkout returns, per service: after payment
	// (with ?session_id=), or when the visitor abandons it.
	Success, Cancel map[Service]string
	// Download and Page prefix a delivered order's link token: its file, and its link
	// page (the address its letter gives).
	Download, Page string
}

// SuccessPath is the page (path and query) that shows a paid order.
func (r Routes) SuccessPath(o Order) string {
	return r.Success[o.Service] + "?session_id=" + o.SessionID
}

// link is the address of a delivered order under prefix (Download or Page); "" before it
// has a link token.
func link(publicURL, prefix string, o Order) string {
	if o.LinkToken == "" {
		return ""
	}
	return publicURL + prefix + o.LinkToken
}
