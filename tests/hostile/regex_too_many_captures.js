// A regexp with more capture groups than QuickJS allows (255): a count cap.
// expect: limit
// error: size limit: SyntaxError: too many captures
return new RegExp("(a)".repeat(300)).source.length;
