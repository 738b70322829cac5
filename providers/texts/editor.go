package texts

// editorLink are the link page's words for the transcript editor (api/editor.go), per
// interface language; the editor itself is a screen of the web app with its own strings.
var editorLink = map[string]map[string]string{
	"en": {
		"page.edit_title": "Correct the transcript",
		"page.edit_note":  "Fix names, numbers or misheard words while your own recording plays, in your browser. Once you save, every format here gives your corrected version; you can go back to the original at any time.",
		"page.edit":       "Edit",
	},
	"jp": {
		"page.edit_title": "文字起こしを修正",
		"page.edit_note":  "ご自身の録音を再生しながら、名前や数字、聞き違いをブラウザで修正できます。保存すると、ここにあるすべての形式が修正版になります。いつでも元に戻せます。",
		"page.edit":       "編集",
	},
	"es": {
		"page.edit_title": "Corregir la transcripción",
		"page.edit_note":  "Corrige nombres, cifras o palabras mal oídas mientras suena tu propia grabación, en el navegador. Al guardar, todos los formatos de esta página darán tu versión corregida; puedes volver al original cuando quieras.",
		"page.edit":       "Editar",
	},
	"ru": {
		"page.edit_title": "Исправить расшифровку",
		"page.edit_note":  "Исправьте имена, числа и ослышки, слушая свою запись, прямо в браузере. После сохранения все форматы на этой странице будут в исправленном виде; вернуться к оригиналу можно в любой момент.",
		"page.edit":       "Редактировать",
	},
	"zh": {
		"page.edit_title": "修改文字稿",
		"page.edit_note":  "在浏览器中播放您自己的录音，同时修正姓名、数字或听错的词。保存后，此页的所有格式都会提供您修改后的版本；您随时可以恢复原稿。",
		"page.edit":       "编辑",
	},
	"ar": {
		"page.edit_title": "تصحيح النص",
		"page.edit_note":  "صحّح الأسماء والأرقام والكلمات التي أُسيء سماعها أثناء تشغيل تسجيلك، في متصفحك. بعد الحفظ تقدّم كل الصيغ في هذه الصفحة نسختك المصحَّحة، ويمكنك العودة إلى الأصل في أي وقت.",
		"page.edit":       "تحرير",
	},
}
