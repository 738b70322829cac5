package speechlang

// espeakLangs is espeak-ng 1.51's language list as package espeak publishes it (a copy:
// this package may not import the engine).
var espeakLangs = []string{"af", "am", "an", "ar", "as", "az", "ba", "be", "bg", "bn", "bpy", "bs", "ca", "chr", "cs", "cv", "cy", "da", "de", "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga", "gd", "gn", "grc", "gu", "hak", "haw", "he", "hi", "hr", "ht", "hu", "hy", "hyw", "ia", "id", "io", "is", "it", "ja", "jbo", "ka", "kk", "kl", "kn", "ko", "kok", "ku", "ky", "la", "lb", "lfn", "lt", "ltg", "lv", "mi", "mk", "ml", "mr", "ms", "mt", "my", "nb", "nci", "ne", "nl", "nog", "om", "or", "pa", "pap", "piqd", "pl", "pt", "py", "qdb", "qu", "quc", "qya", "ro", "ru", "sd", "shn", "si", "sjn", "sk", "sl", "smj", "sq", "sr", "sv", "sw", "ta", "te", "th", "tk", "tn", "tr", "tt", "ug", "uk", "ur", "uz", "vi", "yue", "zh"}
