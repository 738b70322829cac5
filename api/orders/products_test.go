package orders

import "testing"

func TestProductsAreInTheOrdersLanguage(t *testing.T) {
	for _, tt := range []struct {
		svc               Service
		locale            string
		name, description string
	}{
		{TTS, "en", "Text-to-speech", "Voice generation, 1234 characters"},
		{TTS, "ru", "Текст в речь", "Создание озвучки, символов: 1234"},
		{TTS, "ar", "تحويل النص إلى كلام", "توليد الصوت، عدد الأحرف: 1234"},
		{STT, "es", "Voz a texto", "Generación de la transcripción"},
		{VTT, "jp", "動画の文字起こし", "文字起こしの作成"},
		{VTT, "xx", "Video to text", "Transcription generation"},
	} {
		p := productFor(tt.svc, 1234).localized(tt.locale)
		if p.name != tt.name || p.description != tt.description {
			t.Errorf("%s in %s: %q / %q, want %q / %q", tt.svc, tt.locale, p.name, p.description, tt.name, tt.description)
		}
	}
	for _, svc := range []Service{TTS, STT, VTT} {
		for _, locale := range []string{"en", "es", "ru", "ar", "zh", "jp"} {
			if p := productFor(svc, 1).localized(locale); p.name == "" || p.description == "" {
				t.Errorf("%s has no line item in %s", svc, locale)
			}
		}
	}
}
