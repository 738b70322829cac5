package stripe

// pageText is the test checkout page's wording in one interface language.
type pageText struct {
	Lang, Dir                                                                   string
	Title, Banner, Receipt, Explain, Pay, Cancel, Paid, Continue, Expired, Back string
	// "By paying you accept the <terms> and the <refund policy>."
	TermsPre, Terms, TermsAnd, Refunds, TermsPost string
}

// pageTexts are the test checkout page's words in each interface language of Parla (the
// order's locale); an unknown locale gets English.
var pageTexts = map[string]pageText{
	"en": {"en", "ltr", "Test payment", "TEST PAYMENT — no real card is charged", "Receipt to",
		"This site runs without a payment provider. Pay marks the order as paid; nothing is charged.",
		"Pay", "Cancel", "This session is paid.", "Continue", "This session has expired and can no longer be paid.", "Back",
		"By paying you accept the ", "terms of service", " and the ", "refund policy", "."},
	"es": {"es", "ltr", "Pago de prueba", "PAGO DE PRUEBA — no se cobra ninguna tarjeta real", "Recibo a",
		"Este sitio funciona sin proveedor de pagos. Pagar marca el pedido como pagado; no se cobra nada.",
		"Pagar", "Cancelar", "Esta sesión ya está pagada.", "Continuar", "Esta sesión ha caducado y ya no se puede pagar.", "Volver",
		"Al pagar acepta las ", "condiciones del servicio", " y la ", "política de reembolsos", "."},
	"ru": {"ru", "ltr", "Тестовая оплата", "ТЕСТОВАЯ ОПЛАТА — с реальной карты ничего не списывается", "Квитанция на адрес",
		"Сайт работает без платёжного провайдера. Кнопка «Оплатить» отмечает заказ как оплаченный; деньги не списываются.",
		"Оплатить", "Отмена", "Эта сессия оплачена.", "Продолжить", "Срок этой сессии истёк, оплатить её уже нельзя.", "Назад",
		"Оплачивая, вы принимаете ", "условия использования", " и ", "правила возврата", "."},
	"ar": {"ar", "rtl", "دفع تجريبي", "دفع تجريبي — لا يُخصم أي مبلغ من بطاقة حقيقية", "الإيصال إلى",
		"يعمل هذا الموقع دون مزوّد دفع. يضع زر الدفع على الطلب علامة «مدفوع»؛ ولا يُخصم أي مبلغ.",
		"ادفع", "إلغاء", "تم دفع هذه الجلسة.", "متابعة", "انتهت صلاحية هذه الجلسة ولم يعد بالإمكان الدفع.", "رجوع",
		"بالدفع فإنك توافق على ", "شروط الخدمة", " و", "سياسة الاسترداد", "."},
	"zh": {"zh-CN", "ltr", "测试付款", "测试付款 — 不会从真实银行卡扣款", "收据发送至",
		"本站未接入支付服务。点击付款会将订单标记为已付款，不会扣任何费用。",
		"支付", "取消", "此会话已付款。", "继续", "此会话已过期，无法再付款。", "返回",
		"付款即表示您接受", "服务条款", "和", "退款政策", "。"},
	"jp": {"ja", "ltr", "テスト決済", "テスト決済 — 実際のカードには請求されません", "領収書の送付先:",
		"このサイトは決済サービスなしで動いています。「支払う」で注文は支払い済みになりますが、請求は発生しません。",
		"支払う", "キャンセル", "このセッションは支払い済みです。", "続ける", "このセッションは期限切れのため、支払えません。", "戻る",
		"お支払いにより、", "利用規約", "と", "返金ポリシー", "に同意したものとみなされます。"},
}

func textFor(locale string) pageText {
	if t, ok := pageTexts[locale]; ok {
		return t
	}
	return pageTexts["en"]
}
