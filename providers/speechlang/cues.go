package speechlang

import (
	"strings"
	"unicode"
)

// What the words and letters of a short text say about its language. Trigram statistics
// need more letters than a greeting has ("How are you today?" reads as Haitian Creole to
// them); the small words every sentence is made of (articles, pronouns, "thank you") and a
// few letters only some languages write (ñ ¿, ß, ğ ı, є ї, ơ ư đ, …) tell most short
// sentences apart. Only common languages have cues: a rarer one needs the trigram
// statistics of a longer text.

// Weights of the evidence, in words: a word that only one language has counts 1.
const (
	// cueLetters is the longest paragraph, in letters, judged by its cues: longer ones have
	// trigrams enough.
	cueLetters = 100
	// trigramVote is what the trigram statistics' answer among the common languages adds.
	trigramVote = 0.75
	// priorWeight is what the visitor's language adds when it has some evidence already.
	priorWeight = 0.5
	// cueEnough is the least evidence that tells a language, and cueMargin how far ahead of
	// the next it must be: the trigram vote alone is not enough.
	cueEnough = 1
	cueMargin = 0.5
	// rareConfidence is the trigram statistics' least confidence in a language outside
	// commonLanguages for a paragraph shorter than cueLetters.
	rareConfidence = 0.6
)

// commonLanguages are those a short text may be told in: the languages with cues, and
// those alone in their script. Others (Haitian Creole, Latvian, Oromo, …) need a longer
// text, whose trigram statistics are sure.
var commonLanguages = map[string]bool{
	"en": true, "es": true, "fr": true, "de": true, "it": true, "pt": true, "nl": true,
	"sv": true, "da": true, "nb": true, "fi": true, "pl": true, "cs": true, "ro": true,
	"hu": true, "tr": true, "id": true, "vi": true, "ru": true, "uk": true, "bg": true,
	"ar": true, "fa": true, "ur": true, "ja": true, "zh": true, "ko": true, "el": true,
	"he": true, "hi": true, "th": true, "bn": true, "ta": true, "te": true, "kn": true,
	"ml": true, "gu": true, "pa": true, "hy": true, "ka": true, "am": true, "si": true,
	"my": true,
}

// textCues are the tables, indexed once.
var textCues = newCues()

// wordCues are frequent words of common languages, lower case, as the tokens of words
// splits them (letters and marks; "c'est" is "c" and "est"). A word listed under several
// languages counts for each by a share.
var wordCues = map[string]string{
	"en": "the a an and or but is are was were be been am i you he she it we they me my your his her its our their this that these those what where when why how who which do does did don not no yes to of in on at for with from by about can will would could should have has had there here please thank thanks hello hi today tomorrow yesterday let s t ll m go going get got just now very much some any all one up out if then so than too also more like know think want need see come good new sorry ve re after before again back home near off over into only still week work every something someone nobody maybe sure",
	"es": "el la los las un una unos unas y o pero es son está están estás estoy soy eres fue ser de del en con por para que qué cómo dónde cuándo cuánto quién no sí mi mis tu tus su sus me te se le lo nos muy mucho mucha muchas muchos gracias hola buenos buenas hoy mañana este esta esto ese esa al como también hay ya otra otro vez hace tengo tiene tienes quiero quieres puedo puedes puede voy vas va vamos has ha he hemos han estaba bien ahora aquí allí donde cuando porque sin sobre entre hasta desde nada todo toda todos todas algo nunca siempre después antes tarde noche perdón perdona vale bueno buena les yo él ella nosotros ellos usted cuál eso así más menos ayer semana trabajo nuevo nueva cada cosa cual ahí acá ustedes nadie mejor peor",
	"fr": "le la les un une des et ou mais est sont suis es être de du en dans avec pour par sur que qui quoi comment où quand pourquoi ne pas non oui je j tu il elle nous vous ils elles me m te se s mon ma mes ton ta tes son sa ses ce cette ces bonjour merci très au aux c l d qu n aujourd hui demain ai as a avons avez ont vais va allons fait faire peux peut veux veut était été bien aussi encore déjà toujours jamais rien tout tous toute plus moins ici là chez sans sous avant après maintenant alors donc parce comme leur leurs notre nos votre vos ça cela y on lui eux salut soir nuit matin bonne bon hier semaine maison travail nouveau nouvelle chaque quelque chose personne vois sais crois pense plaît excusez désolé désolée accord",
	"de": "der die das den dem des ein eine einen einem und oder aber ist sind bin bist war ich du er sie es wir ihr mich dich mir dir mein meine dein deine nicht kein keine ja nein zu mit von für auf an in im am bei nach aus wie wo was wer warum wann danke bitte hallo heute morgen sehr auch noch uns habe hast hat haben habt wird werden kann kannst können muss musst will möchte gibt geht gut guten gute nacht tag abend bis schon nur jetzt hier dort da wieder immer nie nichts alles viel mehr sich man ihm ihn ihnen unser wenn dass weil ob denn doch mal gestern zum zur vom beim ins um uhr woche hause arbeit neu neue neuen jede jeden etwas jemand niemand sehe weiß glaube denke vielleicht gerne tschüss entschuldigung leider natürlich",
	"it": "il lo la i gli le un uno una e o ma è sono sei siamo di del della dei in con per su da che chi come dove dov quando perché non sì no io tu lui lei noi voi mi ti ci si mio mia tuo tua molto grazie ciao buongiorno oggi domani questo questa anche alle ho hai ha abbiamo avete hanno sto stai sta faccio fa fare posso puoi può voglio vuoi vado vai va bene ora adesso qui qua lì là dopo prima sempre mai niente tutto tutti tutta più meno nel nella nei al allo dal dalla sul sulla col però quello quella ancora già buona buonanotte buonasera scusa sera notte tra fra ieri stasera stamattina scusi prego arrivederci bello bella grande piccolo nuovo nuova ogni suo sua loro cosa quanto quale qual nell sull dell lavoro",
	"pt": "o a os as um uma e ou mas é são está estou sou de do da dos das em no na com por para que como onde quando quem não sim eu você ele ela nós meu minha seu sua muito obrigado obrigada olá hoje amanhã este esta isso também às tem tenho temos vou vai vamos pode posso quer quero foi era estava estão há já ainda sempre nunca nada tudo todos aqui ali lá depois antes agora bem bom boa noite dia vocês nosso nossa nos pelo pela pelos ao aos num numa desculpa até então porque isto aquele ontem semana trabalho novo nova cada coisa qual mais menos pra né tá dele dela nem gente aí",
	"nl": "de het een en of maar is zijn ben bent was ik je jij hij zij we wij u mijn jouw niet geen ja nee van in op met voor naar uit aan bij hoe waar wat wie waarom wanneer dank bedankt hallo vandaag morgen heel erg ook nog dit dat er heb hebt heeft hebben wil wilt kan kun kunt moet gaat ga gaan doe doen al wel dus als omdat dan toen te om over tot door hier daar nu altijd nooit niets alles veel meer welk welke deze die jullie ze zo mij me hem haar ons onze uw laat goed goede avond nacht dag gisteren week thuis werk nieuw nieuwe elke iets niks wordt worden werd kom komt komen zie ziet even graag alsjeblieft alstublieft hoeveel welkom",
	"sv": "och i att det som en ett är var jag du han hon vi ni de min mitt din inte nej ja på med för till av om från hur vad vem varför när tack hej idag mycket också den här där kan har hade ha vill ska skulle kommer går gick gör göra finns blir blev bara inget allt alla man sig mig dig honom henne oss dem sin sitt sina vår vårt våra eller men så efter innan före under över hos vid god natt dag morgon kväll ses hemma redan igår imorgon vecka jobb jobbet ny nya varje något någon inga ingen ser vet tror kanske väldigt gärna hejdå välkommen förlåt ursäkta",
	"da": "og i at det som en et er var jeg du han hun vi de min mit din ikke nej ja på med for til af om fra hvordan hvor hvad hvem hvorfor hvornår tak hej meget også mig dig",
	"nb": "og i at det som en et er var jeg du han hun vi de min mitt din ikke nei ja på med for til av om fra hvordan hvor hva hvem hvorfor når takk hei mye også meg deg",
	"fi": "ja on ei se että minä sinä hän me te he mitä missä miten kuka kiitos hei tänään huomenna hyvin myös",
	"pl": "i w z na do nie tak jest są jestem jak co gdzie kiedy dlaczego kto to ten ta się mi mnie ci ciebie mój moja twój od po za dla bardzo dziękuję proszę cześć dzień dobry dzisiaj jutro też jesteś był była było mam masz ma mamy macie mają chcę chcesz może mogę możesz wiem już jeszcze tylko teraz tu tam zawsze nigdy nic wszystko dobrze dobra dobranoc noc wieczór czy ale albo lub że bo więc który która które jego jej nasz wasz ich go mu sobie przez przy pod nad przed ile wczoraj tydzień domu praca pracy nowy nowa każdy coś ktoś nikt widzę myślę przepraszam oczywiście",
	"cs": "a je to se na v že s z do jsem jsi jak co kde proč kdy kdo ne ano děkuji prosím dnes zítra velmi můj moje",
	"ro": "și în la de pe cu este sunt nu da eu tu el ea noi voi ce cum unde când mulțumesc vă rog bună azi mâine foarte",
	"hu": "a az és egy hogy nem igen van vagyok mi ki hol mikor miért köszönöm kérem szia ma holnap nagyon is",
	"tr": "ve bir bu şu o da de mi mı mu mü ne nasıl nerede neden kim ben sen biz siz onlar benim senin için ile çok evet hayır değil var yok teşekkür merhaba lütfen bugün yarın ama gibi daha en kadar sonra önce şimdi burada orada her hiç bazı tamam iyi güzel geceler gece sabah akşam gün hafta saat teşekkürler nereye niye",
	"id": "dan yang di ke dari ini itu saya aku kamu anda dia kami kita mereka tidak ya apa mana bagaimana kapan siapa mengapa terima kasih halo selamat hari besok sangat juga akan ada untuk dengan",
	"vi": "và là của có không tôi bạn anh chị em chúng ta này đó ở với cho được một những các rất cảm ơn xin chào hôm nay mai gì đâu sao",
	"ru": "и в не на я что он она мы вы они ты как где когда почему кто это этот эта с по за из у к о да нет спасибо пожалуйста привет сегодня завтра очень мне меня тебя тебе все был была есть было были будет буду хочу хочешь могу можешь может надо нужно там тут здесь уже ещё еще только сейчас всегда никогда ничего всё хорошо хороший хорошая ночь день утро вечер или но а какой какая какое мой моя твой твоя наш наша ваш его её их нам вам от для про после перед около между через под над до ли бы же нас вас вчера неделя дома работа работы новый новая каждый никто тоже также вижу знаю думаю можно извини извините конечно ладно пока",
	"uk": "і в не на я що він вона ми ви вони ти як де коли чому хто це цей ця з по за із у до та так ні дякую будь ласка привіт сьогодні завтра дуже мені мене тебе тобі все був була є було були буде маю має мають хочу хочеш можу можеш може треба там тут вже ще тільки зараз завжди ніколи нічого всі добре добрий добра ніч день ранок вечір чи але або який яка яке мій моя твій твоя наш наша ваш його її їх нам вам від для про після перед біля між через під над буду нас вас вчора тиждень вдома робота роботи новий нова кожен щось хтось ніхто теж також бачу знаю думаю можна вибач вибачте звичайно гаразд",
	"bg": "и в не на аз че той тя ние вие те ти как къде кога защо кой това този тази с по за от у да благодаря моля здравей днес утре много ми ме съм си е сме сте са беше ще има няма искам може трябва тук там вече още само сега винаги никога нищо всичко всички добре добър лека нощ ден сутрин вечер или но какво какъв каква моят моята твоят него нея тях нас вас до след преди между през под над",
	"ar": "في من على إلى أن هذا هذه كان مع عن لا ما هل كيف أين متى لماذا أنا أنت هو هي نحن شكرا مرحبا اليوم غدا جدا لم لن قد كل بعد قبل عند عندي هنا هناك الآن أيضا لكن أو ثم يا ليس كانت يكون ذلك تلك التي الذي الذين نعم شيء أريد تريد يمكن يمكنك فضلك صباح مساء الخير أمس",
	"fa": "و در به از که این آن است را با برای من تو او ما شما نه بله چه کجا چطور کی چرا ممنون سلام امروز فردا خیلی هم می هست نیست بود هستم هستی هستند دارم داری دارد داریم نمی خواهم خواهی باید اینجا آنجا حالا هنوز همه همیشه هیچ چیزی یک خوب بعد قبل پیش روی زیر کنار تا اگر ولی اما یا هر کنم کنی کند کنید شود شد الان",
	"ur": "کے میں ہے کی اور کو سے نے یہ وہ کیا نہیں ہیں آپ ہم شکریہ آج",
}

// letterCues are letters only some common languages write.
var letterCues = map[string]string{
	"es": "ñ¿¡", "de": "ßäöü", "tr": "ğışçöü", "pl": "łąęśźżćń", "pt": "ãõç", "fr": "œêûçèàùîôëï",
	"it": "ìòèàù", "sv": "åäö", "da": "åæø", "nb": "åæø", "fi": "äö", "cs": "řůěčšž", "ro": "șțăâî",
	"hu": "őűöü", "vi": "ơưđăâêô",
	"uk": "єїґі", "ru": "ыэёъ", "bg": "ъ", "be": "ўі", "sr": "ђћџјљњ", "mk": "ѓќѕјљњ",
	"ar": "ةيىأإؤ", "fa": "پچژگکی", "ur": "ٹڈڑںےھپچژگکی",
}

// markers are letters without which a text is not in a language, short as it is:
// Ukrainian writes і, ї, є or ґ in nearly every sentence, and trigram statistics alone
// mistake Russian for it.
var markers = map[string]string{"uk": "іїєґІЇЄҐ"}

// foreignLetters are letters a language never writes: a text with one is not in it.
// Russian has no і, ї or є, Ukrainian and Bulgarian no ы, э or ё; Arabic writes ك and ي,
// never Persian's ک and ی (nor پ چ ژ گ); Persian has none of Urdu's ٹ ڈ ڑ ں ے.
var foreignLetters = map[string]string{
	"ru": "іїєґІЇЄҐ", "uk": "ыэёъЫЭЁЪ", "bg": "ыэёЫЭЁіїєІЇЄ",
	"ar": "پچژگکی", "fa": "ٹڈڑںے",
}

// marked reports whether text has one of lang's markers (or lang has none) and is not
// foreign to it.
func marked(lang, text string) bool {
	m, ok := markers[lang]
	return (!ok || strings.ContainsAny(text, m)) && !foreign(lang, text)
}

// foreign reports whether text has a letter lang never writes.
func foreign(lang, text string) bool { return strings.ContainsAny(text, foreignLetters[lang]) }

// cues are wordCues and letterCues, indexed: for each word and letter, the languages it
// counts for and by how much.
type cues struct {
	words   map[string]map[string]float64
	letters map[rune]map[string]float64
}

// vietnameseLetter reports whether r is one of the letters with two diacritics (ấ, ở, ự,
// …) that only Vietnamese writes: Unicode's Latin Extended Additional from Ạ to ỹ.
func vietnameseLetter(r rune) bool { return r >= 0x1EA0 && r <= 0x1EF9 }

// newCues indexes the tables. A word or letter shared by k languages counts 1/k for each
// (twice that for a letter): what all languages share tells nothing.
func newCues() *cues {
	c := &cues{words: map[string]map[string]float64{}, letters: map[rune]map[string]float64{}}
	for lang, list := range wordCues {
		for _, w := range strings.Fields(list) {
			add(c.words, w, lang)
		}
	}
	for lang, list := range letterCues {
		for _, r := range list {
			add(c.letters, r, lang)
		}
	}
	share(c.words, 1)
	share(c.letters, 2)
	return c
}

// add notes that key is a cue of lang.
func add[K comparable](m map[K]map[string]float64, key K, lang string) {
	if m[key] == nil {
		m[key] = map[string]float64{}
	}
	m[key][lang] = 1
}

// share gives each language of a cue weight divided by the number of its languages.
func share[K comparable](m map[K]map[string]float64, weight float64) {
	for _, langs := range m {
		for l := range langs {
			langs[l] = weight / float64(len(langs))
		}
	}
}

// score adds up the cues of text for each language: every word once per time it occurs,
// every letter (and mark such as ¿ or ¡) once however often.
func (c *cues) score(text string) map[string]float64 {
	text = strings.ToLower(text)
	scores := map[string]float64{}
	for _, w := range words(text) {
		for l, v := range c.words[w] {
			scores[l] += v
		}
	}
	seen := map[rune]bool{}
	for _, r := range text {
		if seen[r] || r < 0x80 {
			continue
		}
		seen[r] = true
		if vietnameseLetter(r) {
			scores["vi"] += 2
		}
		for l, v := range c.letters[r] {
			scores[l] += v
		}
	}
	return scores
}

// words splits text into lower-case words: runs of letters and marks (a Persian word's
// zero-width non-joiner or an apostrophe ends one).
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r)
	})
}
