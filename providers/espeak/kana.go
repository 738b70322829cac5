package espeak

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"parla/media"
)

// kakasiBinary converts kanji to kana: Debian's kakasi package.
const kakasiBinary = "kakasi"

// kanaTimeout bounds one conversion: kakasi converts about a megabyte a second.
const kanaTimeout = time.Minute

// kakasiArgs are kakasi's arguments for turning the kanji of a UTF-8 text into hiragana.
// espeak-ng 1.51's ja voice reads hiragana and katakana but names each kanji as
// "Chinese letter"; kana and everything else pass through unchanged.
func kakasiArgs() []string {
	return []string{
		"-i", "utf8", "-o", "utf8", // UTF-8 in and out (its default is EUC-JP)
		"-JH", // kanji → hiragana
	}
}

// hasKanji reports whether text holds a character kakasi would convert.
func hasKanji(text string) bool {
	return strings.ContainsFunc(text, func(r rune) bool {
		return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r == '々'
	})
}

// toKana returns text with its kanji written in hiragana, for espeak-ng's ja voice. A text
// without kanji is returned as it is, without running kakasi.
func toKana(text string) (string, error) {
	if !hasKanji(text) {
		return text, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), kanaTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kakasiBinary, kakasiArgs()...)
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	stderr := &media.TailBuffer{}
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("converting kanji to kana with kakasi: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}
