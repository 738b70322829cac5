package orders

import "fmt"

// productTexts are a line item's name and description in each interface language, by
// service; the TTS description takes the number of characters (worded so that no plural
// form is needed).
var productTexts = map[Service]map[string][2]string{
	TTS: {
		"en": {"Text-to-speech", "Voice generation, %d characters"},
		"es": {"Texto a voz", "Generación de voz, caracteres: %d"},
		"ru": {"Озвучивание текста", "Создание озвучки, символов: %d"},
		"ar": {"تحويل النص إلى كلام", "توليد الصوت، عدد الأحرف: %d"},
		"zh": {"文字转语音", "语音生成，%d 个字符"},
		"jp": {"テキスト読み上げ", "音声生成、%d 文字"},
	},
	STT: {
		"en": {"Speech-to-text", "Transcription generation"},
		"es": {"Voz a texto", "Generación de la transcripción"},
		"ru": {"Аудио в текст", "Создание расшифровки"},
		"ar": {"تحويل الكلام إلى نص", "إنشاء النص المكتوب"},
		"zh": {"语音转文字", "生成文字稿"},
		"jp": {"音声の文字起こし", "文字起こしの作成"},
	},
	VTT: {
		"en": {"Video to text", "Transcription generation"},
		"es": {"Vídeo a texto", "Generación de la transcripción"},
		"ru": {"Видео в текст", "Создание расшифровки"},
		"ar": {"تحويل الفيديو إلى نص", "إنشاء النص المكتوب"},
		"zh": {"视频转文字", "生成文字稿"},
		"jp": {"動画の文字起こし", "文字起こしの作成"},
	},
}

// localized returns the product with its name and description in the interface language
// of the order (English for a language without one).
func (p product) localized(locale string) product {
	texts, ok := productTexts[p.svc][locale]
	if !ok {
		return p
	}
	p.name = texts[0]
	p.description = texts[1]
	if p.svc == TTS {
		p.description = fmt.Sprintf(texts[1], p.quantity)
	}
	return p
}
