package orders

import "errors"

// ErrLinkExpired is returned by Download for a link past its 10 days or a swept result.
var ErrLinkExpired = errors.New("download link expired")
