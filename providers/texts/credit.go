package texts

// credit are the words of the API's credit (api/credit): its checkout line item and the
// letter that carries a key. {key}, {amount}, {date} and {base} are filled in.
var credit = map[string]map[string]string{
	"en": {
		"product.credit.name":        "API credit",
		"product.credit.description": "Prepaid credit for Parla's OpenAI-compatible API",
		"credit.letter.subject":      "Parla: your API key",
		"credit.letter.body": "Thank you for your purchase.\n\nYour API key: {key}\nCredit: {amount}, valid until {date}.\n\n" +
			"Point any OpenAI client at {base}/v1 and use the key as its API key. Keep it secret: whoever has it spends your credit. " +
			"We keep only a fingerprint of it and cannot send it again.\n\nBalance and recent calls: {base}/api",
	},
	"jp": {
		"product.credit.name":        "APIクレジット",
		"product.credit.description": "ParlaのOpenAI互換APIのプリペイドクレジット",
		"credit.letter.subject":      "Parla：APIキー",
		"credit.letter.body": "ご購入ありがとうございます。\n\nAPIキー：{key}\nクレジット：{amount}（有効期限 {date}）\n\n" +
			"OpenAIのクライアントの接続先を {base}/v1 にし、このキーをAPIキーとして使ってください。キーは秘密にしてください。持っている人は誰でもクレジットを使えます。" +
			"当方はキーの指紋のみを保存しており、再送はできません。\n\n残高と最近の呼び出し：{base}/api",
	},
	"es": {
		"product.credit.name":        "Crédito de API",
		"product.credit.description": "Crédito prepago para la API de Parla compatible con OpenAI",
		"credit.letter.subject":      "Parla: tu clave de API",
		"credit.letter.body": "Gracias por tu compra.\n\nTu clave de API: {key}\nCrédito: {amount}, válido hasta el {date}.\n\n" +
			"Apunta cualquier cliente de OpenAI a {base}/v1 y usa la clave como su clave de API. Guárdala en secreto: quien la tenga gasta tu crédito. " +
			"Solo guardamos una huella de ella y no podemos enviarla de nuevo.\n\nSaldo y llamadas recientes: {base}/api",
	},
	"ru": {
		"product.credit.name":        "Кредит API",
		"product.credit.description": "Предоплата за OpenAI-совместимый API Parla",
		"credit.letter.subject":      "Parla: ваш ключ API",
		"credit.letter.body": "Спасибо за покупку.\n\nВаш ключ API: {key}\nКредит: {amount}, действует до {date}.\n\n" +
			"Укажите любому клиенту OpenAI адрес {base}/v1 и этот ключ как ключ API. Храните его в тайне: любой, у кого он есть, тратит ваш кредит. " +
			"Мы храним только его отпечаток и не можем прислать его снова.\n\nБаланс и последние вызовы: {base}/api",
	},
	"zh": {
		"product.credit.name":        "API 额度",
		"product.credit.description": "Parla 的 OpenAI 兼容 API 预付额度",
		"credit.letter.subject":      "Parla：您的 API 密钥",
		"credit.letter.body": "感谢您的购买。\n\n您的 API 密钥：{key}\n额度：{amount}，有效期至 {date}。\n\n" +
			"将任何 OpenAI 客户端的地址设为 {base}/v1，并把此密钥用作 API 密钥。请妥善保密：持有者即可使用您的额度。" +
			"我们只保存它的指纹，无法再次发送。\n\n余额和最近的调用：{base}/api",
	},
	"ar": {
		"product.credit.name":        "رصيد الواجهة البرمجية",
		"product.credit.description": "رصيد مسبق الدفع لواجهة Parla البرمجية المتوافقة مع OpenAI",
		"credit.letter.subject":      "Parla: مفتاح الواجهة البرمجية",
		"credit.letter.body": "شكرًا لشرائك.\n\nمفتاحك: {key}\nالرصيد: {amount}، صالح حتى {date}.\n\n" +
			"وجّه أي عميل OpenAI إلى {base}/v1 واستخدم هذا المفتاح مفتاحًا للواجهة. احفظه سرًّا: من يملكه ينفق رصيدك. " +
			"لا نحتفظ إلا ببصمته ولا يمكننا إرساله مرة أخرى.\n\nالرصيد والاستدعاءات الأخيرة: {base}/api",
	},
}
