package media

import "context"

// The process gate: a runner that may have lost its order (a node frozen past the death
// timeout while another took the order over) must start no new engine process. The order
// book puts a check on the job's context; every engine calls ProcessGate before each
// external process it starts (an espeak-ng piece, an ffmpeg encode or chunk), so a
// resumed runner stops at its next process instead of producing the order again.

type gateKey struct{}

// WithProcessGate returns ctx carrying check, which ProcessGate calls.
func WithProcessGate(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, gateKey{}, check)
}

// ProcessGate returns the error of ctx's gate check (nil when it has none): an engine
// about to start a process returns it instead.
func ProcessGate(ctx context.Context) error {
	if check, ok := ctx.Value(gateKey{}).(func() error); ok {
		return check()
	}
	return nil
}
