package api

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"parla/api/orders/keylock"
	"parla/providers"
)

// speechCache keeps speech on disk in dir, one file per name, each produced once: requests
// for one name wait for one production, and a file appears whole or not at all (written
// beside it, then renamed). The voice samples and the free previews both use one.
type speechCache struct {
	dir     string
	speaker providers.Speaker
	names   keylock.Locks
	touch   bool // a hit renews the file's time, for a cache trimmed least recently used first
}

// file returns the path of name's speech, speaking req into it first when it is missing;
// cached says it was there. what names the speech in errors ("a preview").
func (sc *speechCache) file(ctx context.Context, name string, req providers.SpeechRequest, what string) (p string, cached bool, err error) {
	p = filepath.Join(sc.dir, name)
	defer sc.names.Lock(name)()
	if st, err := os.Stat(p); err == nil && st.Size() > 0 {
		if sc.touch {
			now := time.Now()
			_ = os.Chtimes(p, now, now) // recently used
		}
		return p, true, nil
	}
	var buf bytes.Buffer
	if err := sc.speaker.Speak(ctx, req, &buf); err != nil {
		return "", false, fmt.Errorf("producing %s: %w", what, err)
	}
	if err := os.MkdirAll(sc.dir, 0o755); err != nil {
		return "", false, fmt.Errorf("creating the cache of %s: %w", what, err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", false, fmt.Errorf("caching %s: %w", what, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", false, err
	}
	return p, false, nil
}
