package api

// ErrorCodes lists every stable error code the API can answer, in the table's order.
func ErrorCodes() []string {
	codes := make([]string, len(errorKinds))
	for i, k := range errorKinds {
		codes[i] = k.code
	}
	return codes
}
